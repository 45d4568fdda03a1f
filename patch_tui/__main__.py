from patch_tui.cli import main

raise SystemExit(main())
