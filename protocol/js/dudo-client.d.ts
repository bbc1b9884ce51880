// Types of dudo-client.js. The messages' types are generated from the protocol's JSON
// Schemas (messages.d.ts, by `dudo schemas write`); this file types the library around
// them. They use EventTarget, Event, CustomEvent and AbortSignal, which TypeScript's "dom"
// lib and @types/node both declare.

import type {
  Action,
  BotsResponse,
  CreateRequest,
  CreateResponse,
  Die,
  Emote,
  ErrorCode,
  ErrorMessage,
  GameView,
  JoinRequest,
  JoinResponse,
  LeaderboardResponse,
  LeftMessage,
  LobbyMessage,
  MovedMessage,
  OrganizeResponse,
  PlayerResponse,
  PongMessage,
  QuickplayRequest,
  QuickplayResponse,
  RegisterRequest,
  RegisterResponse,
  ResultsResponse,
  ServerMessage,
  StandingsResponse,
  TablesResponse,
  TournamentCreateRequest,
  TournamentCreateResponse,
  TournamentMessage,
  TournamentsResponse,
  UnregisterResponse,
  ViewMessage,
  WatchResponse,
  WelcomeMessage,
} from "./messages.js";

export type * from "./messages.js";

/** The protocol version `v` this library speaks. */
export declare const PROTOCOL_VERSION: 1;

/** The faces in order, typed (`legal.bid[i]` is the lowest quantity of `FACES[i]`). */
export declare const FACES: readonly [1, 2, 3, 4, 5, 6];

/** A create's answer when it named you: your seat, player and token are there. */
export type SeatedCreateResponse = CreateResponse & { seat: number; player: string; token: string };

/** A tournament create's answer with a `host`: your entrant token and handle are there. */
export type HostedTournamentResponse = TournamentCreateResponse & { player: string; token: string };

/** A request key (docs/protocol.md, "Send a request key"): 24 hex digits. */
export declare function requestKey(): string;

/** A seat's own seed for the dice (docs/rules.md, "Seeds from everyone"): `seed`, else
 *  one made for you; its commitment goes with the request, and a `DudoConnection` opened
 *  with the seat's token reveals it when the table asks. Not sent when you give your own
 *  `seed_commitment` (then pass the seed to the connection); `seed: ""` brings none (a
 *  token handed to another program, which could not reveal it). */
export interface SeedOption { seed?: string }

/** A fresh seed: 128 random bits, as 32 hex digits. */
export declare function makeSeed(): string;

/** The commitment to a seed: lowercase hex of SHA-256("dudo-client/2:" + seed). */
export declare function seedCommitment(seed: string): Promise<string>;

/** The seed made (or given) for the seat `token` holds, in this page or process. */
export declare function seatedSeed(token: string | null): string | null;

/** A finished game's log as `verify` reads it: `rounds` is a finished game's
 *  `game.log`; `table` and the seeds are there when the game was dealt from everyone's
 *  seeds (a null commitment: the seat was dealt its public seed). */
export interface GameLog {
  table?: string | null;
  rounds: ReadonlyArray<{ round?: number; seed?: string | null; commitment?: string | null; dice?: ReadonlyArray<ReadonlyArray<number>> }>;
  server_seed?: string;
  server_commitment?: string;
  client_seeds?: ReadonlyArray<string>;
  client_commitments?: ReadonlyArray<string | null>;
}

/** A finished game's log from its last view (`game.log` and `seeds`). */
export declare function logOfView(view: ViewMessage): GameLog;

/** What does not hold in a finished game's log (or its last view), each with its round
 *  (empty: every check holds), computed with Web Crypto, not asked of the server. */
export declare function verify(log: GameLog | ViewMessage): Promise<string[]>;

/** What a table's refusal refers to (whose turn, the bid to beat...): word it yourself. */
export type Facts = NonNullable<ErrorMessage["facts"]>;

/** Every failure: a refusal (`code` from the server), the network (`unavailable`), `closed`. */
export declare class DudoError extends Error {
  constructor(code: string, message: string, status?: number, facts?: Facts | null);
  /** One of ErrorCode; a newer server may send one this version does not list. */
  code: ErrorCode | (string & {});
  /** The HTTP status, for an HTTP call the gateway answered. */
  status: number | undefined;
  facts: Facts | null;
}

/** Just what the library needs of `fetch` (the platform's by default). */
export type Fetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ ok: boolean; status: number; statusText: string; json(): Promise<any> }>;

/** The HTTP API: tables, seats, tournaments, the leaderboard. Answers are plain objects. */
export declare class DudoApi {
  constructor(base: string, options?: { fetch?: Fetch });
  readonly base: string;
  /** One call; `idempotent`: a request key, sent again after a cut connection, 503 or 504. */
  call<T = unknown>(
    method: string,
    path: string,
    body?: object,
    options?: { idempotent?: boolean },
  ): Promise<T>;
  tables(): Promise<TablesResponse>;
  /** With a `name`, you take seat 0 and host it: the answer has your seat's token. */
  createTable(body: CreateRequest & { name: string } & SeedOption): Promise<SeatedCreateResponse>;
  createTable(body: CreateRequest & SeedOption): Promise<CreateResponse>;
  joinTable(table: string, body: JoinRequest & SeedOption): Promise<JoinResponse>;
  /** Quick play: a seat at a fitting open table, else a new one (`created` says which). */
  joinOrCreate(body: QuickplayRequest & SeedOption): Promise<QuickplayResponse>;
  /** A spectator's token for `table`. */
  watchTable(table: string): Promise<WatchResponse>;
  tournaments(): Promise<TournamentsResponse>;
  /** With a `host` (your name), you register as its host: the answer has your token
   *  (and your client brings seeds to your tables, as `register`). */
  createTournament(body: TournamentCreateRequest & { host: string }): Promise<HostedTournamentResponse>;
  createTournament(body: TournamentCreateRequest): Promise<TournamentCreateResponse>;
  /** Your entrant token. Your client brings a seed of its own to each table you are
   *  seated at (`seeds` defaults to true: a `DudoConnection` opened with the token commits
   *  and reveals when the table asks); `seeds: false` for a token handed to a program
   *  that does not. */
  register(tournament: string, body: RegisterRequest): Promise<RegisterResponse>;
  unregister(tournament: string, token: string): Promise<UnregisterResponse>;
  begin(tournament: string, token: string): Promise<OrganizeResponse>;
  organize(
    tournament: string,
    token: string,
    action: "pause" | "resume" | "cancel" | "kick" | "announce",
    fields?: { target?: string; text?: string },
  ): Promise<OrganizeResponse>;
  /** A private tournament's: an entrant token of it, or its invite (else `unauthorized`). */
  results(tournament: string, access?: { token?: string; invite?: string }): Promise<ResultsResponse>;
  standings(tournament: string, access?: { token?: string; invite?: string }): Promise<StandingsResponse>;
  /** The best rated players (`limit`: 1..500, default 50). */
  leaderboard(limit?: number): Promise<LeaderboardResponse>;
  /** An identity user's statistics, rating and chips; refused `unknown_player` otherwise. */
  player(handle: string): Promise<PlayerResponse>;
  /** The endgame solves still under way (`endgame_solves` null: none); a hard bot plays
   *  its heuristic in such a round until its solve is done. */
  botSolves(): Promise<BotsResponse>;
}

export interface DudoConnectionOptions {
  /** A WebSocket class; default: the platform's, else the `ws` package's (Node 20). */
  WebSocket?: unknown;
  /** Also watch the lobby (default: when there is no token). */
  lobby?: boolean;
  maxBackoffMs?: number;
  /** Connection attempts in a row that may fail before it gives up (default: never). */
  retries?: number;
  /** How long `open()` waits for the welcome (default: no limit). */
  openTimeoutMs?: number;
  /** The seed your seat committed to (default: the one `DudoApi` made for this token in
   *  this page or process), revealed when the table asks for it (`seeds.until`). At a
   *  tournament's table a seed is made for the table when it asks your seat
   *  (`seeds.asked`), committed (`commit_seed`), then revealed the same way. `""`: none,
   *  anywhere. */
  seed?: string;
}

/** addEventListener's options (spelled out: the DOM's and Node's types differ in name). */
export interface ListenerOptions {
  capture?: boolean;
  once?: boolean;
  passive?: boolean;
  signal?: AbortSignal;
}

/** Each event's `detail`. */
export interface DudoConnectionEvents {
  /** Every message as it arrives, before anything else (acks and answered errors too). */
  message: ServerMessage;
  welcome: WelcomeMessage;
  /** A newer view; the requests it answers are settled before it fires. */
  view: ViewMessage;
  left: LeftMessage;
  moved: MovedMessage;
  tournament: TournamentMessage;
  lobby: LobbyMessage;
  pong: PongMessage;
  /** Refusals nobody waits for. */
  error: ErrorMessage;
  /** "reconnecting": lost, trying again; "closed": ended for good (see `ended`). */
  state: "connecting" | "open" | "reconnecting" | "closed";
  /** The connection was lost (it reconnects). */
  dropped: string;
  /** Welcomed again after a drop. */
  reconnected: WelcomeMessage;
  /** `retries` ran out: the connection ends `gave_up`. */
  gave_up: string;
  /** The finished game at this table dealt your seat its public seed, not yours (your
   *  reveal did not reach the table in time, or was lost): fair dealing, but say so. */
  seed_not_taken: string;
  /** The connection cannot go on: why (`closed`, `gave_up`, `unavailable`, the hello's refusal). */
  ended: DudoError;
  /**
   * The gateway renewed the token at a hello: the new one, living 7 days from now, is
   * `token` from then on (reconnects use it). Store it where you kept the first.
   */
  token: string;
}

/** One WebSocket to a gateway, kept open; requests are promises settled by their ids. */
export declare class DudoConnection extends EventTarget {
  constructor(base: string, token: string | null, options?: DudoConnectionOptions);
  readonly url: string;
  /** The token it says hello with: the one given, then each renewed one. */
  readonly token: string | null;
  /** The newest view (null before the first, and after `moved`). */
  view: ViewMessage | null;
  /** While connected and said hello. */
  welcome: WelcomeMessage | null;
  closed: boolean;
  /** Why the connection ended (null while it has not): every later request rejects with it. */
  reason: DudoError | null;
  /** Resolves, once the connection has ended for good, with why: `closed` (`close()`),
   * `gave_up` (`retries` ran out), `unavailable` (`openTimeoutMs`), or the hello's refusal
   * (`unauthorized`, `unknown_table`: a restarted `dudo serve` keeps no table). */
  finished: Promise<DudoError>;
  /** The gateway's clock minus this device's, in ms (from the last welcome's `now`). */
  clockOffsetMs: number;
  /** The gateway's time now: count `deadline` and `reveal_until` against it. */
  serverNow(): number;
  /** Connect (and keep reconnecting); resolves on `welcome` (the lobby: its full list). */
  open(): Promise<WelcomeMessage | LobbyMessage>;
  /** Close for good: no reconnect; pending and later requests reject `closed`. */
  close(): void;
  /** Resolves with the view that shows the action; rejects with a DudoError. */
  act(action: Action): Promise<ViewMessage>;
  leave(): Promise<LeftMessage>;
  /** Host only: start with the players seated so far; the game's first view. */
  start(): Promise<ViewMessage>;
  /** After the game's end: propose a rematch at `table` (a table you just made); the view
   * that shows it. Someone's came first: DudoError `table_exists`. */
  rematch(table: string): Promise<ViewMessage>;
  /** A quick reaction at your table; the next view (its `events` carry it). */
  react(emote: Emote): Promise<ViewMessage>;
  resync(): Promise<ViewMessage>;
  ping(): Promise<PongMessage>;
  /** Play the seat to the end of its game: `policy` chooses each of its turns' actions;
   * resolves with the game's last view, rejects when the connection ends. A refused
   * action goes to `onRefused` and the policy is asked again (3 times a view at most);
   * one refused because the table moved on (`not_your_turn`, `game_over`, `paused`)
   * waits for the next view. */
  play(
    policy: (game: GameView, view: ViewMessage) => Action | Promise<Action>,
    options?: { onRefused?: (err: DudoError) => void },
  ): Promise<ViewMessage>;
  addEventListener<K extends keyof DudoConnectionEvents>(
    type: K,
    listener: (event: CustomEvent<DudoConnectionEvents[K]>) => void,
    options?: boolean | ListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: ((event: Event) => void) | { handleEvent(event: Event): void } | null,
    options?: boolean | ListenerOptions,
  ): void;
  removeEventListener<K extends keyof DudoConnectionEvents>(
    type: K,
    listener: (event: CustomEvent<DudoConnectionEvents[K]>) => void,
    options?: boolean | ListenerOptions,
  ): void;
  removeEventListener(
    type: string,
    listener: ((event: Event) => void) | { handleEvent(event: Event): void } | null,
    options?: boolean | ListenerOptions,
  ): void;
}
