/** An agent: one per device host, known by its name; its token's hash stays in the store. */
export interface Agent {
  readonly id: number;
  readonly name: string;
  readonly hostname: string | null;
  readonly version: string | null;
  readonly createTime: number;
  readonly lastSeenTime: number | null;
}
