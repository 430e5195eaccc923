"""`python -m skill_doctor` runs the command-line interface."""

from .cli import main

raise SystemExit(main())
