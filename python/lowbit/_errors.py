"""LowbitError and the one place a C status becomes an exception."""
from . import _lib

# The C enum lb_status, for callers that match on it.
STATUS_NAMES = ("LB_OK", "LB_EARG", "LB_ERECIPE", "LB_EMEM", "LB_EIO",
                "LB_ECOMPILE", "LB_ECUDA", "LB_ENODEV", "LB_EUNSUP")


class LowbitError(RuntimeError):
    """A lowbit call failed.  .status is the lb_status enumerator
    ("LB_ERECIPE"), .code its value, .reason lb_status_name()'s words ("bad
    recipe"), .message lb_errmsg()'s text (file and line for recipes)."""

    def __init__(self, status, message):
        self.code = int(status)
        self.status = (STATUS_NAMES[self.code] if 0 <= self.code < len(STATUS_NAMES)
                       else f"lb_status {self.code}")
        self.reason = _lib.lib.lb_status_name(self.code).decode()
        self.message = message
        super().__init__(message)

    def __str__(self):
        return f"{self.message} [{self.status}: {self.reason}]"


def check(status):
    """Raises LowbitError for a status other than LB_OK.  lb_errmsg is read
    at once: it is per thread and kept only until the next failure."""
    if status != 0:
        raise LowbitError(status, _lib.lib.lb_errmsg().decode("utf-8", "replace"))
