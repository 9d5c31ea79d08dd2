from farm.launcher import main

main()
