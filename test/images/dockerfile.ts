/**
 * A reader for the instructions our Dockerfile uses: enough to find the build-context files its
 * COPY lines name, which are the inputs of the image's content cache (images.ts).
 * https://docs.docker.com/reference/dockerfile/
 */

export interface Instruction {
  keyword: string;
  /** The text after the keyword, continuation lines joined. */
  text: string;
}

export interface Stage {
  /** `FROM <image>` as written (ARGs unexpanded). */
  image: string;
  name?: string;
  instructions: Instruction[];
}

export interface Copy {
  /** The stage copied from; undefined: the build context. */
  from?: string;
  sources: string[];
  destination: string;
}

/** Stages in order; `ARG`s before the first FROM are returned as defaults. */
export function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const lines = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword = '', text = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') {
      const [image = '', as, name] = text.split(/\s+/);
      stages.push({ image, ...(as?.toUpperCase() === 'AS' ? { name } : {}), instructions: [] });
    } else if (stages.length === 0 && upper === 'ARG') {
      const [name = '', value = ''] = text.split('=');
      args[name] = value;
    } else {
      stages.at(-1)?.instructions.push({ keyword: upper, text });
    }
  }
  return { args, stages };
}

export function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY')
    .map((i) => {
      const words = i.text.split(/\s+/);
      const flags = words.filter((w) => w.startsWith('--'));
      const paths = words.filter((w) => !w.startsWith('--'));
      const from = flags.find((f) => f.startsWith('--from='))?.slice('--from='.length);
      return {
        ...(from === undefined ? {} : { from }),
        sources: paths.slice(0, -1),
        destination: paths.at(-1) ?? '',
      };
    });
}
