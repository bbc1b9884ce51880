"""The deployment's credentials (:mod:`.authority`: seat and entrant tokens, keyed player
ids) and an app's identities (:mod:`.identity`: the JWTs an app's backend signs)."""
