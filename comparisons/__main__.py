from comparisons.cli import console_main

console_main()
