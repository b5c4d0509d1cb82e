"""The web console: sign-in, sessions and the pages a person uses, served by the bridge."""
