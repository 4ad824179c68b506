from devfix.cli import main

main()
