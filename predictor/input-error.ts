/** A bad request, named by the field at fault. The API turns it into BAD_USER_INPUT. */
export class InputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'InputError';
  }
}
