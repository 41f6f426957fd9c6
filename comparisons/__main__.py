from comparisons.cli import main

raise SystemExit(main())
