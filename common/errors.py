"""The one error type that the command line turns into a single clear line (exit code 2)."""


class UserInputError(ValueError):
    """Bad input from the user: the message says what is wrong and what to do."""
