"""skill-doctor: grade a saved coding-agent session, deterministically, with cited evidence."""

__version__ = "0.1.0"
