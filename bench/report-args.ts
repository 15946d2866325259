/**
 * The arguments of the report scripts that summarise a recorded profile: the profile (a file or
 * a directory) and how many of the busiest functions to list.
 */
export function reportArgs(
  args: readonly string[],
  usage: string,
  defaultTop: number,
): { input: string; top: number } {
  const input = args.find((a) => !a.startsWith('--'));
  if (input === undefined) throw new Error(`usage: ${usage}`);
  const top = Number(args.find((a) => a.startsWith('--top='))?.slice(6) ?? defaultTop);
  return { input, top };
}
