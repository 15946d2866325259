/**
 * Local error registry: every error the operator raises on purpose has a stable code, a message
 * template and, where it reaches HTTP, a status. Codes are for logs, events and tests; they are
 * never JSON-RPC wire codes (those live with the bridge, see src/bridge).
 *
 * Add an entry to ERRORS, then throw `operatorError('CODE', ...args)`.
 */

interface ErrorSpec<A extends unknown[]> {
  message: (...args: A) => string;
  httpStatus?: number;
}

const define = <A extends unknown[]>(spec: ErrorSpec<A>): ErrorSpec<A> => spec;

export const ERRORS = {
  MCPOP_INVALID_FLAG: define({
    message: (flag: string, reason: string) => `invalid value for ${flag}: ${reason}`,
  }),
  MCPOP_NOT_CANONICAL: define({
    message: (reason: string) => `cannot digest a value that RFC 8785 cannot represent: ${reason}`,
  }),
  MCPOP_KUBE_API: define({
    message: (request: string, status: number, detail: string) =>
      `${request}: HTTP ${status}: ${detail}`,
  }),
  MCPOP_KUBE_CONFIG: define({
    message: (reason: string) => `no usable Kubernetes client configuration: ${reason}`,
  }),
  MCPOP_LEADERSHIP_LOST: define({
    message: (lease: string) => `lost leadership of lease ${lease}; stopping so another can lead`,
  }),
} as const;

export type ErrorCode = keyof typeof ERRORS;
type ArgsOf<C extends ErrorCode> = Parameters<(typeof ERRORS)[C]['message']>;

export class OperatorError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number | undefined;

  constructor(code: ErrorCode, message: string, httpStatus?: number, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OperatorError';
    this.code = code;
    this.httpStatus = httpStatus;
  }
}

export function operatorError<C extends ErrorCode>(code: C, ...args: ArgsOf<C>): OperatorError {
  const spec = ERRORS[code] as ErrorSpec<ArgsOf<C>>;
  return new OperatorError(code, spec.message(...args), spec.httpStatus);
}
