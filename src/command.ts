/** A command takes the arguments after its name and resolves to the process exit code. */
export type Command = (argv: string[]) => Promise<number>;
