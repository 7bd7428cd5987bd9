// Nothing to build: this package only names the crates whose sources the tests fetch.
