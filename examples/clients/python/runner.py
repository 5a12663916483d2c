"""A bot-account runner on the generated client (see ../README.md, "The runners").

Fill in `choose()` below: given your seat's view, return one entry of `view.legal_moves`.
Everything else is done here, the lichess-bot way (docs/bots.md, section 10):

- the player: `--key` (or `DOMINO_KEY`), else a new bot account whose key is printed once;
- its stream, `GET /v1/players/me/events`: every game it is given (`game_started`, and on
  every (re)connect or `resync` the list of `GET /v1/players/me/games?status=playing`) is
  played in a thread of its own, long-polling the view until `legal_moves` is not empty;
- every `challenge` (and on (re)connecting, every open one `GET /v1/challenges?direction=in`
  lists) is accepted: a default, change `on_challenge()` to be choosier;
- `match`: a duplicate match against a built-in level (`POST /v1/matches`), its margin
  printed each time one of its games ends, until it is finished; `--seed TEXT` makes its
  deals from TEXT, so two versions of a bot can be measured on the same deals;
- `challenge NAME`: a game against a player or a built-in level (`POST /v1/challenges`),
  played once accepted, until it is finished;
- `--seek PRESET`: a game with whoever seeks the same (`POST /v1/seeks`), or with a
  built-in level when nobody came within `--fallback-after` seconds (`--fallback LEVEL`);
  the game comes on the stream (`game_started`), the seek is read again meanwhile, and the
  runner exits once the game is finished (Ctrl-C while it waits cancels the seek);
- `tournament join ID` (or `--tournament ID`): enters the tournament with the player's key
  and plays every game it gives (`tournament_round` names them, `game_started` too), the
  standings printed as they change, until it is over (`tournament_finished`);
  `tournament create`: makes one (with built-in levels as entrants, say), enters it,
  starts it with `--start`, and plays it the same way;
- `league ID` (or `--league ID`): enters the league with the player's key (`409
  already_entered`: it is in already, fine) and keeps its stream open, which is what makes
  a pulling bot available to the league: the league pairs it whenever it has a free
  place, and every game it is given is played, its line of the table printed as it
  changes, until stopped (Ctrl-C: it is paired no more once its stream is closed; `--matches
  N` exits after N more of its matches are counted).

Every call that is answered `429 rate_limited` or `503` with `Retry-After` is sent again
after that many seconds and up to as many again at random (at most 8 times; a line says
so), as docs/bots.md asks. A read, or a move with its Idempotency-Key, that gets no answer
at all (its connection closed under it) is sent again too, after a second.

Usage:
  python runner.py URL [--key KEY] [--name NAME]            # play whatever comes, forever
  python runner.py URL match --opponent greedy --preset block --deals 10 --parallel 2 \\
      [--seed TEXT] [--rules '{"target": null, "rounds": 1}'] [--rated]  # exits when it ends
  python runner.py URL challenge NAME --preset block [--rated]  # one game; exits when it ends
  python runner.py URL tournament create --title TITLE --preset block --format round_robin \\
      [--levels random,greedy] [--start]                    # make, enter, play; exits when over
  python runner.py URL tournament join ID                   # enter it, play it; exits when over
  python runner.py URL --seek all_fives [--fallback greedy --fallback-after 15] \
      [--seats 2] [--clock '{"bank_secs": 120}'] [--rated]   # one game; exits when it ends
  python runner.py URL --tournament ID [--key KEY]          # enter it, play it; exits when it ends
  python runner.py URL league ID [--matches N]              # enter it, play until stopped
  python runner.py URL --league ID [--key KEY]              # the same
(with the generated `domino_client` importable). Exits non-zero on any unexpected answer.
"""

import argparse
import json
import os
import queue
import random
import secrets
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any, NoReturn, TypeVar
from uuid import UUID

import httpx

from domino_client import AuthenticatedClient, Client
from domino_client.api.challenges import (
    accept_challenge, cancel_challenge, cancel_seek, create_challenge, create_seek, get_challenge, get_seek,
    list_challenges)
from domino_client.api.leagues import enter_league, get_league
from domino_client.api.matches import create_match, get_match
from domino_client.api.play import get_game, make_move
from domino_client.api.players import create_player, my_games, my_profile
from domino_client.api.tournaments import create_tournament, get_tournament, join_tournament, start_tournament
from domino_client.models import (
    BotLevel, ChallengeList, ChallengeView, ChallengeViewStatus, ClockBody, CreateChallenge, CreateChallengePreset,
    CreateMatch, CreateMatchPreset, CreatePlayer, CreateSeek, CreateSeekPreset, CreateTournament,
    CreateTournamentPreset, DrawMove, FallbackBody, GameStatus, GameView, JoinTournament, LeagueView,
    ListChallengesDirection, MatchView, MoveResult, MugginsMove, MyGamesStatus, PassMove, PlayerGameList, PlayerKey, PlayerProfile, PlayMove,
    ResignMove, RulesOverrides, SeekView, SeekViewStatus, TournamentView)
from domino_client.types import Response

T = TypeVar("T")
Move = DrawMove | MugginsMove | PassMove | PlayMove | ResignMove  # the spec's `Move`
View = GameView | MoveResult  # a seat's view; a move's answer is the new view plus its events


# ---- the one function to fill in ---------------------------------------------------------

def points(move: Move) -> int:
    return 0 if isinstance(move, ResignMove) else move.points or 0  # resign is never listed


def choose(view: View) -> Move:
    """Your bot: given your seat's view (hand, layout, scores, `legal_moves`, never empty
    here), return the move to make, one entry of `view.legal_moves` as it is.

    The default: the most points, first of equals (under muggins the claiming form of a
    scoring play is listed first, so it claims)."""
    return max(view.legal_moves, key=points)


def on_challenge(challenge: ChallengeView) -> bool:
    """Whether to accept a challenge (a default: every one)."""
    return True


# ---- the runner ------------------------------------------------------------------------

print_lock = threading.Lock()


def say(line: str) -> None:
    with print_lock:
        print(line, flush=True)


def fail(line: str) -> NoReturn:
    """Any answer not expected ends the whole runner, from any thread, with status 1."""
    with print_lock:
        print(f"FAILED: {line}", file=sys.stderr, flush=True)
    os._exit(1)


RETRIES = 8  # sends of one call after its first, each after the Retry-After asked
LONGEST_WAIT = 60.0  # seconds: a Retry-After above it is cut to it


# Under the server's keep-alive (5 s), so this side drops an idle connection first: at the
# same 5 s (httpx's default), a call could go out on a connection the server was closing.
KEEPALIVE_EXPIRY = 4.0


class Retrying(httpx.HTTPTransport):
    """Sends a call again after `Retry-After` when it is answered 429 (a rate limit) or 503
    (the store did not answer), and after a second when it got no answer at all:
    docs/bots.md's table. A move carries its Idempotency-Key, so sending it again cannot
    play it twice; a call that is neither a read nor keyed is never sent twice."""

    def __init__(self) -> None:
        super().__init__(limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        safe = request.method == "GET" or "idempotency-key" in request.headers
        for attempt in range(RETRIES + 1):
            try:
                response = super().handle_request(request)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as error:
                if not safe or attempt == RETRIES:
                    raise
                say(f"retry: {request.method} {request.url.path} got no answer ({error!r}); "
                    f"again in 1 s ({attempt + 1} of {RETRIES})")
                time.sleep(1.0)
                continue
            wait = response.headers.get("retry-after")
            if response.status_code not in (429, 503) or wait is None or attempt == RETRIES:
                return response
            response.read()
            response.close()
            try:
                detail = json.loads(response.content).get("detail", "")
            except ValueError:
                detail = ""
            asked = min(float(wait), LONGEST_WAIT) if wait.isdigit() else 1.0
            # Up to as long again, at random: the runner's threads, refused together, would
            # otherwise all come back in the same instant and lose to each other again.
            secs = round(asked * (1 + random.random()), 2)
            say(f"retry: {request.method} {request.url.path} answered {response.status_code} "
                f"({detail}); again in {secs:g} s ({attempt + 1} of {RETRIES})")
            time.sleep(secs)
        raise AssertionError("unreachable")


def http_args() -> dict[str, Any]:
    return {"transport": Retrying()}


def expect(status: int, kind: type[T], response: Response[Any], what: str) -> T:
    """The parsed answer, or exit if it is not the one expected."""
    if response.status_code != status or not isinstance(response.parsed, kind):
        fail(f"{what}: unexpected answer {response.status_code}: {response.content.decode()}")
    return response.parsed


class Runner:
    def __init__(self, client: AuthenticatedClient) -> None:
        self.client = client
        self.lock = threading.Lock()
        self.playing: set[str] = set()  # started, never twice (the list and events overlap)
        self.finished: set[str] = set()
        self.ended: "queue.Queue[str]" = queue.Queue()  # game ids, as their threads end
        self.started = threading.Event()  # set as a game starts: a seek may have been matched
        self.tournament_news: "queue.Queue[str]" = queue.Queue()  # ids of tournaments that moved on
        self.connected = threading.Event()

    # -- one game --
    def start_game(self, game_id: str) -> None:
        with self.lock:
            if game_id in self.playing:
                return
            self.playing.add(game_id)
        threading.Thread(target=self.play, args=(game_id,), daemon=True).start()
        self.started.set()

    def play(self, game_id: str) -> None:
        gid = UUID(game_id)
        # A tournament names a round's games before it makes them (and makes one its
        # admission refused at its next poll): not found yet, wait.
        deadline = time.monotonic() + 300
        first = get_game.sync_detailed(gid, client=self.client)
        while first.status_code == 404 and time.monotonic() < deadline:
            time.sleep(0.5)
            first = get_game.sync_detailed(gid, client=self.client)
        view: View = expect(200, GameView, first, f"game {game_id}")
        say(f"game {game_id} ({view.preset}): playing seat {view.you}")
        moves = 0
        while view.status != GameStatus.FINISHED:
            if not view.legal_moves:  # not ours to move: wait until the game changes
                view = expect(200, GameView, get_game.sync_detailed(
                    gid, client=self.client, after=view.version, wait=30), f"game {game_id}")
                continue
            move = choose(view)
            view = expect(200, MoveResult, make_move.sync_detailed(
                gid, client=self.client, body=move, idempotency_key=str(uuid.uuid4())),
                f"game {game_id}: move {move.to_dict()}")
            moves += 1
        winner = view.result.winner if view.result is not None else None
        say(f"game {game_id} finished: scores {view.scores}, winner {winner}, "
            f"we were seat {view.you} and made {moves} moves")
        with self.lock:
            self.finished.add(game_id)
        self.ended.put(game_id)

    # -- the player's stream --
    def catch_up(self) -> None:
        page = 1
        while True:
            games = expect(200, PlayerGameList, my_games.sync_detailed(
                client=self.client, status=MyGamesStatus.PLAYING, page=page, per_page=100),
                "my games")
            for game in games.games:
                self.start_game(game.game_id)
            if len(games.games) < games.per_page:
                break
            page += 1
        challenges = expect(200, ChallengeList, list_challenges.sync_detailed(
            client=self.client, direction=ListChallengesDirection.IN), "my challenges")
        for challenge in challenges.challenges:  # open ones, received
            self.answer(challenge)

    def answer(self, challenge: ChallengeView) -> None:
        if not on_challenge(challenge):
            return  # it expires unanswered (or decline it: POST /v1/challenges/{id}/decline)
        response = accept_challenge.sync_detailed(challenge.id, client=self.client)
        if response.status_code == 409:  # closed meanwhile (canceled, expired): nothing to do
            say(f"challenge {challenge.id}: already closed")
            return
        accepted = expect(200, ChallengeView, response, f"accept challenge {challenge.id}")
        say(f"challenge {challenge.id} from {challenge.challenger.name} ({challenge.preset}): "
            f"accepted, {accepted.status}")

    def events(self) -> Iterator[tuple[str, str]]:
        """The stream's events, (name, data), from connecting until it closes."""
        http = self.client.get_httpx_client()
        with http.stream("GET", "/v1/players/me/events",
                         headers={"accept": "text/event-stream"}) as response:
            if response.status_code != 200:
                response.read()
                fail(f"events: unexpected answer {response.status_code}: {response.text}")
            # Nothing is replayed: list what is in play once connected, so nothing falls between.
            self.catch_up()
            self.connected.set()
            name, data = "message", list[str]()
            for line in response.iter_lines():
                if line == "":
                    if data:
                        yield name, "\n".join(data)
                    name, data = "message", []
                elif line.startswith(":"):
                    continue  # the keep-alive comment
                else:
                    field, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if field == "event":
                        name = value
                    elif field == "data":
                        data.append(value)

    def listen(self) -> None:
        """The stream, for ever: (re)connect, catch up, then handle every event."""
        delay = 1.0
        while True:
            try:
                for name, data in self.events():
                    delay = 1.0
                    self.handle(name, data)
                say("events: the stream closed; reconnecting")
            except httpx.HTTPError as error:
                say(f"events: {error!r}; reconnecting in {delay:.0f} s")
                time.sleep(delay)
                delay = min(delay * 2, 30.0)

    def handle(self, name: str, data: str) -> None:
        if name == "resync":  # the stream fell behind: list again
            self.catch_up()
            return
        event: dict[str, Any] = json.loads(data) if data else {}
        if name == "game_started":
            self.start_game(str(event["game_id"]))
        elif name == "challenge":
            self.answer(ChallengeView.from_dict(event))
        elif name == "tournament_round":
            for game_id in event["game_ids"]:
                self.start_game(str(game_id))
            if not event["game_ids"]:
                say(f"tournament {event['tournament_id']} round {event['round']}: we have the bye")
            self.tournament_news.put(str(event["tournament_id"]))
        elif name == "tournament_finished":
            self.tournament_news.put(str(event["tournament_id"]))
        # game_finished: the game's own thread sees it end; the rest needs nothing here.


def margin_line(match: MatchView) -> str:
    s, m = match.score, match.margin
    ci = f"[{m.ci95[0]:+.2f}, {m.ci95[1]:+.2f}]" if m.ci95 else "n/a (fewer than 2 deals)"
    return (f"match {match.id} {match.status}: {m.deals_done}/{match.deals} deals, "
            f"score {s.wins}-{s.losses}-{s.draws} (w-l-d), points {s.points_for}-"
            f"{s.points_against}; margin {m.per_deal_mean:+.2f} a deal, 95% CI {ci}")


def run_match(runner: Runner, args: argparse.Namespace) -> None:
    rules = RulesOverrides.from_dict(json.loads(args.rules)) if args.rules else None
    body = CreateMatch(opponent=args.opponent, preset=CreateMatchPreset(args.preset),
                       deals=args.deals, parallel=args.parallel, rated=args.rated, rules=rules)
    if args.seed is not None:
        body.seed = args.seed
    match = expect(201, MatchView, create_match.sync_detailed(client=runner.client, body=body),
                   "create match")
    seeded = f", deals from seed {args.seed!r}" if args.seed is not None else ""
    say(f"match {match.id}: {args.deals} deals of {args.preset} against {args.opponent}, "
        f"{args.parallel} at a time{seeded}")
    last = ""
    while True:
        try:  # a game ended (its thread says so), or look again in a while anyway
            runner.ended.get(timeout=5)
        except queue.Empty:
            pass
        match = expect(200, MatchView, get_match.sync_detailed(match.id, client=runner.client),
                       "match")
        for game in match.games:  # the stream announces them; this only makes sure
            if game.status == "playing":
                runner.start_game(str(game.game_id))
        line = margin_line(match)
        if line != last:
            say(line)
            last = line
        if match.status == "finished":
            for game in sorted(match.games, key=lambda g: (g.deal, str(g.game_id))):
                say(f"match {match.id} deal {game.deal}: game {game.game_id}")
            return
        if match.status not in ("waiting", "running"):
            fail(f"match {match.id} is {match.status}")


def run_seek(runner: Runner, args: argparse.Namespace) -> None:
    fallback = (FallbackBody(level=BotLevel(args.fallback), after_secs=args.fallback_after)
                if args.fallback else None)
    clock = ClockBody.from_dict(json.loads(args.clock)) if args.clock else None
    body = CreateSeek(preset=CreateSeekPreset(args.seek), rated=args.rated, seats=args.seats,
                      clock=clock, fallback=fallback)
    seek = expect(201, SeekView, create_seek.sync_detailed(client=runner.client, body=body), "seek")
    instead = f", else {fallback.level.value} after {fallback.after_secs} s" if fallback else ""
    say(f"seek {seek.id}: {args.seek}, {seek.seats} seats{', rated' if seek.rated else ''}{instead}: "
        f"{seek.status.value}")
    try:
        # The game comes on the stream; the seek is read again each time a game starts, and
        # every second anyway (its status says when it was matched, or expired).
        while seek.status == SeekViewStatus.WAITING:
            runner.started.wait(timeout=1)
            runner.started.clear()
            seek = expect(200, SeekView, get_seek.sync_detailed(seek.id, client=runner.client),
                          f"seek {seek.id}")
    except KeyboardInterrupt:
        # A seek left waiting would match a game nobody plays: take it back.
        cancel_seek.sync_detailed(seek.id, client=runner.client)
        raise
    if seek.status != SeekViewStatus.MATCHED or seek.game_id is None:
        hint = ": nobody came (seek again, or with --fallback)" if seek.status == SeekViewStatus.EXPIRED else ""
        fail(f"seek {seek.id} is {seek.status.value}{hint}")
    game_id = str(seek.game_id)
    say(f"seek {seek.id}: matched, game {game_id} (watch it at {args.url.rstrip('/')}/watch/{game_id})")
    runner.start_game(game_id)  # the stream announces it; this only makes sure
    while runner.ended.get() != game_id:
        pass


def run_challenge(runner: Runner, args: argparse.Namespace) -> None:
    rules = RulesOverrides.from_dict(json.loads(args.rules)) if args.rules else None
    body = CreateChallenge(opponents=[args.opponent], preset=CreateChallengePreset(args.preset),
                           rated=args.rated, rules=rules)
    challenge = expect(201, ChallengeView, create_challenge.sync_detailed(
        client=runner.client, body=body), "challenge")
    say(f"challenge {challenge.id}: {args.preset} against {args.opponent}: {challenge.status.value}")
    try:
        # A built-in level accepts at once; a player when it answers (or it expires).
        while challenge.status == ChallengeViewStatus.OPEN:
            runner.started.wait(timeout=1)
            runner.started.clear()
            challenge = expect(200, ChallengeView, get_challenge.sync_detailed(
                challenge.id, client=runner.client), f"challenge {challenge.id}")
    except KeyboardInterrupt:
        cancel_challenge.sync_detailed(challenge.id, client=runner.client)
        raise
    if challenge.status != ChallengeViewStatus.ACCEPTED or not challenge.game_id:
        fail(f"challenge {challenge.id} is {challenge.status.value}")
    game_id = str(challenge.game_id)
    say(f"challenge {challenge.id}: accepted, game {game_id} "
        f"(watch it at {args.url.rstrip('/')}/watch/{game_id})")
    runner.start_game(game_id)
    while runner.ended.get() != game_id:
        pass


def new_tournament(runner: Runner, args: argparse.Namespace) -> str:
    body = CreateTournament.from_dict({
        "name": args.title, "preset": args.preset, "format": args.format,
        **({"levels": args.levels.split(",")} if args.levels else {}),
        **({"rounds": args.rounds} if args.rounds else {}),
        **({"rules": json.loads(args.rules)} if args.rules else {}),
    })
    made = expect(201, TournamentView, create_tournament.sync_detailed(client=runner.client, body=body),
                  "create tournament")
    say(f"tournament {made.id} ({made.name}) made")
    return str(made.id)


def standings_line(t: TournamentView, me: PlayerProfile) -> str:
    table = ", ".join(f"{p.rank}. {p.name}{' (us)' if p.id == me.id else ''} {p.score:g}"
                      f"{' withdrawn' if p.withdrawn else ''}" for p in t.players)
    return f"tournament {t.id} {t.status}, round {t.round_} of {t.rounds}: {table}"


def run_tournament(runner: Runner, args: argparse.Namespace, me: PlayerProfile, start: bool) -> None:
    tid = UUID(args.tournament)
    # `{}` enters the key's player (the generated client cannot send no body at all).
    joined = join_tournament.sync_detailed(tid, client=runner.client, body=JoinTournament())
    if joined.status_code == 409:  # entered already (a runner started again?): play on
        t = expect(200, TournamentView, get_tournament.sync_detailed(tid, client=runner.client),
                   f"tournament {tid}")
        if not any(p.id == me.id for p in t.players):
            fail(f"join tournament {tid}: unexpected answer 409: {joined.content.decode()}")
    else:
        t = expect(200, TournamentView, joined, f"join tournament {tid}")
    say(f"tournament {t.id} ({t.name}): {t.format_} of {t.preset}, {t.status}; "
        f"watch it at {args.url.rstrip('/')}/tournaments/{t.id}")
    if start:
        t = expect(200, TournamentView, start_tournament.sync_detailed(tid, client=runner.client),
                   f"start tournament {tid}")
    last = ""
    while True:
        try:  # a round started or it ended (the stream says so), or look again anyway
            runner.tournament_news.get(timeout=2)
        except queue.Empty:
            pass
        t = expect(200, TournamentView, get_tournament.sync_detailed(tid, client=runner.client),
                   f"tournament {tid}")
        if t.status == "finished":
            # Over: each game's thread has seen its end, or is about to; the table last.
            deadline = time.monotonic() + 10
            while runner.playing - runner.finished and time.monotonic() < deadline:
                time.sleep(0.05)
            say(standings_line(t, me))
            return
        line = standings_line(t, me)
        if line != last:
            say(line)
            last = line
        if t.status != "registering" and t.status != "running":
            fail(f"tournament {t.id} is {t.status}: {t.reason}")


def league_line(lg: LeagueView, me: PlayerProfile) -> str:
    mine = next((e for e in lg.entrants if e.id == me.id), None)
    if mine is None:
        return f"league {lg.id} ({lg.name}): we are not in it"
    ci = f" (95% {mine.margin_ci95[0]:+.1f} to {mine.margin_ci95[1]:+.1f})" if mine.margin_ci95 else ""
    return (f"league {lg.id}: {mine.rank}. of {len(lg.entrants)}, rating {mine.rating} ± {mine.deviation}, "
            f"{mine.matches} {'match' if mine.matches == 1 else 'matches'} (won {mine.wins}, drawn {mine.draws}, lost {mine.losses}), "
            f"margin {mine.margin_per_deal:+.1f} a deal{ci}; {'available' if mine.available else 'away'}")


def run_league(runner: Runner, args: argparse.Namespace, me: PlayerProfile) -> None:
    lid = UUID(args.league)
    entered = enter_league.sync_detailed(lid, client=runner.client)
    if entered.status_code == 409:
        problem = json.loads(entered.content or b"{}")
        if problem.get("code") != "already_entered":  # full, or a cap: nothing to play
            fail(f"enter league {lid}: unexpected answer 409: {entered.content.decode()}")
        lg = expect(200, LeagueView, get_league.sync_detailed(lid, client=runner.client), f"league {lid}")
    else:
        lg = expect(200, LeagueView, entered, f"enter league {lid}")
    say(f"league {lg.id} ({lg.name}): {lg.preset}, {lg.deals_per_match} "
        f"{'deal' if lg.deals_per_match == 1 else 'deals'} a match; "
        f"watch it at {args.url.rstrip('/')}/leagues/{lg.id}")
    # The open stream (runner.listen) is what makes us available: the league pairs us as
    # it drives, and each game comes as game_started. Here only the table is read now and
    # then, after a game ends or every 10 s.
    first = next((e.matches for e in lg.entrants if e.id == me.id), 0)
    last = ""
    while True:
        try:
            runner.ended.get(timeout=10)
        except queue.Empty:
            pass
        lg = expect(200, LeagueView, get_league.sync_detailed(lid, client=runner.client), f"league {lid}")
        line = league_line(lg, me)
        if line != last:
            say(line)
            last = line
        played = next((e.matches for e in lg.entrants if e.id == me.id), first) - first
        if args.matches and played >= args.matches:
            say(f"league {lg.id}: {played} of our matches counted; stopping (our stream closes: "
                f"we are paired no more)")
            return


def main() -> None:
    parser = argparse.ArgumentParser(description="A bot account that plays every game it is given.")
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--key", default=os.environ.get("DOMINO_KEY"),
                        help="the player's key (default: $DOMINO_KEY; none: a new bot account)")
    parser.add_argument("--name", help="the new bot account's name (default: py-runner-<random>)")
    parser.add_argument("--seek", metavar="PRESET", choices=[p.value for p in CreateSeekPreset],
                        help="seek one game of PRESET, play it, exit")
    parser.add_argument("--fallback", metavar="LEVEL", choices=[b.value for b in BotLevel],
                        help="with --seek: a built-in level fills the seats nobody took in time")
    parser.add_argument("--fallback-after", metavar="SECS", type=int, default=15,
                        help="with --fallback: how long to wait for players first (1 to 300)")
    parser.add_argument("--seats", type=int, help="with --seek: 2 to 4 (default 2)")
    parser.add_argument("--clock", help="with --seek: the clock as JSON, e.g. '{\"bank_secs\": 120}'")
    parser.add_argument("--rated", action="store_true", help="with --seek: a rated game")
    parser.add_argument("--tournament", metavar="ID",
                        help="enter tournament ID, play every game it gives, exit when it is over")
    parser.add_argument("--league", metavar="ID",
                        help="enter league ID and play every game it gives, until stopped")
    parser.add_argument("--matches", metavar="N", type=int, default=0,
                        help="with --league: exit once N more of our matches are counted (0: never)")
    levels = ", ".join(b.value for b in BotLevel)
    rules_help = "rules overrides as JSON, e.g. '{\"target\": null, \"rounds\": 1}'"
    sub = parser.add_subparsers(dest="command")
    m = sub.add_parser("match", help="a duplicate match against a built-in level or a player")
    m.add_argument("--opponent", default="greedy", help=f"a built-in level ({levels}) or a player's name")
    m.add_argument("--preset", default="block", choices=[p.value for p in CreateMatchPreset])
    m.add_argument("--deals", type=int, default=10)
    m.add_argument("--parallel", type=int, default=2)
    m.add_argument("--seed", help="make the deals from this text: the same text, the same deals")
    m.add_argument("--rules", help=rules_help)
    m.add_argument("--rated", action="store_true")
    m.add_argument("--key", default=argparse.SUPPRESS, help="as above")
    c = sub.add_parser("challenge", help="one game against a player or a built-in level")
    c.add_argument("opponent", metavar="NAME", help=f"a player's name or id, or a built-in level ({levels})")
    c.add_argument("--preset", default="block", choices=[p.value for p in CreateChallengePreset])
    c.add_argument("--rules", help=rules_help)
    c.add_argument("--rated", action="store_true")
    c.add_argument("--key", default=argparse.SUPPRESS, help="as above")
    t = sub.add_parser("tournament", help="make or join a tournament, play it until it is over")
    tsub = t.add_subparsers(dest="action", required=True)
    tc = tsub.add_parser("create", help="make a tournament, enter it and play it")
    tc.add_argument("--title", required=True, help="its name, 1 to 64 characters")
    tc.add_argument("--preset", default="block", choices=[p.value for p in CreateTournamentPreset])
    tc.add_argument("--format", default="swiss", choices=["swiss", "round_robin"])
    tc.add_argument("--levels", help=f"built-in levels entered, comma-separated ({levels})")
    tc.add_argument("--rounds", type=int, help="swiss: how many rounds (default: enough)")
    tc.add_argument("--rules", help=rules_help)
    tc.add_argument("--start", action="store_true", help="start it once entered")
    tc.add_argument("--key", default=argparse.SUPPRESS, help="as above")
    tj = tsub.add_parser("join", help="enter a tournament and play it")
    tj.add_argument("id", metavar="ID")
    tj.add_argument("--key", default=argparse.SUPPRESS, help="as above")
    lgp = sub.add_parser("league", help="enter a league and play every game it gives, until stopped")
    lgp.add_argument("id", metavar="ID")
    lgp.add_argument("--key", default=argparse.SUPPRESS, help="as above")
    lgp.add_argument("--matches", metavar="N", type=int, default=argparse.SUPPRESS, help="as above")
    args = parser.parse_args()
    if sum([args.command is not None, bool(args.seek), bool(args.tournament), bool(args.league)]) > 1:
        parser.error("match, challenge, tournament, league, --seek, --tournament and --league are modes: "
                     "one at a time")
    if args.command == "tournament" and args.action == "join":
        args.tournament = args.id
    if args.command == "league":
        args.league = args.id

    key: str | None = args.key
    if key is None:
        account = expect(201, PlayerKey, create_player.sync_detailed(
            client=Client(base_url=args.url, httpx_args=http_args()),
            body=CreatePlayer(name=args.name or f"py-runner-{secrets.token_hex(4)}", bot=True)),
            "create player")
        key = account.key
        say(f"bot account {account.player.name} created; its key, shown once (keep it, "
            f"then run with --key or DOMINO_KEY):\n{key}")
    client = AuthenticatedClient(base_url=args.url, token=key, httpx_args=http_args())
    me = expect(200, PlayerProfile, my_profile.sync_detailed(client=client), "me")
    say(f"playing as {me.name}")

    runner = Runner(client)
    threading.Thread(target=runner.listen, daemon=True).start()
    if args.command is None and not args.seek and not args.tournament and not args.league:
        threading.Event().wait()  # play for ever (Ctrl-C ends it)
    if not runner.connected.wait(timeout=30):  # the stream first: game_started is not replayed
        fail("events: not connected after 30 s")
    if args.seek:
        run_seek(runner, args)
    elif args.command == "challenge":
        run_challenge(runner, args)
    elif args.command == "tournament" and args.action == "create":
        args.tournament = new_tournament(runner, args)
        run_tournament(runner, args, me, args.start)
    elif args.tournament:
        run_tournament(runner, args, me, False)
    elif args.league:
        run_league(runner, args, me)
    else:
        run_match(runner, args)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
