"""The names the client packages' types get where a schema gives none (:mod:`.typings`).

Why a list of names: an inline object is named after where it sits (its parent and
property), which reads badly for the types a client developer uses most (``Player``,
not ``ViewMessagePlayers``); a name here says what it is.
"""

# Names for inline types whose default (parent name + property) would read badly.
# Keyed by "file#JSON pointer".
NAMES = {
    "ws-in-react.schema.json#/properties/emote": "Emote",
    "rules.schema.json#/properties/preset": "Preset",
    "ws-out-view.schema.json#/properties/players/items/anyOf/0": "Player",
    "ws-out-lobby.schema.json#/properties/tables/items": "LobbyTable",
    "ws-out-lobby.schema.json#/properties/entry/anyOf/0": "LobbyEntry",
    "game-view.schema.json#/$defs/privatePart/properties/legal": "Legal",
    "game-view.schema.json#/$defs/privatePart/properties/odds": "Odds",
    "game-view.schema.json#/$defs/publicPart/properties/rules": "TableRules",
    "standings.schema.json#/properties/tables/items": "StandingsTable",
    "standings.schema.json#/properties/tables/items/properties/players/items": "TablePlayer",
    "standings.schema.json#/properties/places/items": "Place",
    "standings.schema.json#/properties/registered/items": "Entrant",
    "standings.schema.json#/properties/announcement": "Announcement",
    "http-tournaments-response.schema.json#/properties/tournaments/items": "TournamentListing",
    "http-leaderboard-response.schema.json#/properties/leaderboard/items": "LeaderboardEntry",
    "http-bots-response.schema.json#/properties/endgame_solves/anyOf/0": "EndgameSolves",
    "http-results-response.schema.json#/properties/places/items": "ResultPlace",
    "http-results-response.schema.json#/properties/tables/items": "TableHistory",
    "http-results-response.schema.json#/properties/tables/items/properties/rounds/items": (
        "HistoryRound"
    ),
    "http-results-response.schema.json#/properties/tables/items/properties/rounds/items/"
    "properties/joined/items": "SeatedPerson",
    "http-results-response.schema.json#/properties/tables/items/properties/rounds/items/"
    "properties/left/items": "SeatedPerson",
    "http-results-response.schema.json#/properties/tables/items/properties/rounds/items/"
    "properties/out/items": "Person",
    "action.schema.json#/oneOf/0": "BidAction",
    "action.schema.json#/oneOf/1": "CallAction",
    "action.schema.json#/oneOf/2": "DirectionAction",
}
