/** An upload that is not what it claims to be; the message is the reason users see. */
export class InspectionError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'InspectionError';
  }
}
