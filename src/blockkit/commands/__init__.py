"""One module per subcommand; each defines ``command``. Commands hold no checking logic."""
