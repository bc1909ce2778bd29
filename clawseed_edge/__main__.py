"""``python -m clawseed_edge`` runs the command line."""

from clawseed_edge.cli.main import main

raise SystemExit(main())
