"""One exception hierarchy; the CLI turns each into a single line on stderr and an exit code."""

from __future__ import annotations


class SkillDoctorError(Exception):
    """Base of every error the CLI reports as one line."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 key: str | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.key = key
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = self.path
            if self.line:
                where += f":{self.line}"
            where += ": "
        key = f"{self.key}: " if self.key else ""
        return f"{where}{key}{self.message}"


class UsageError(SkillDoctorError):
    """Bad command-line arguments (exit 2)."""


class RubricError(SkillDoctorError):
    """An invalid rubric file; names the file, line and key (exit 2)."""


class OutputError(SkillDoctorError):
    """The report could not be written; nothing is left behind (exit 3)."""

    exit_code = 3
