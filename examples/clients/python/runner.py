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
  printed each time one of its games ends, until it is finished.

Usage:
  python runner.py URL [--key KEY] [--name NAME]            # play whatever comes, forever
  python runner.py URL match --opponent greedy --preset block --deals 10 --parallel 2 \\
      [--rules '{"target": null, "rounds": 1}'] [--rated]    # a match; exits when it ends
(with the generated `domino_client` importable). Exits non-zero on any unexpected answer.
"""

import argparse
import json
import os
import queue
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
from domino_client.api.challenges import accept_challenge, list_challenges
from domino_client.api.matches import create_match, get_match
from domino_client.api.play import get_game, make_move
from domino_client.api.players import create_player, my_games, my_profile
from domino_client.models import (
    ChallengeList, ChallengeView, CreateMatch, CreateMatchPreset, CreatePlayer, DrawMove, GameStatus,
    GameView, ListChallengesDirection, MatchView, MoveResult, MugginsMove, MyGamesStatus, PassMove, PlayerGameList,
    PlayerKey, PlayerProfile, PlayMove, ResignMove, RulesOverrides)
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
        self.ended: "queue.Queue[str]" = queue.Queue()  # game ids, as their threads end
        self.connected = threading.Event()

    # -- one game --
    def start_game(self, game_id: str) -> None:
        with self.lock:
            if game_id in self.playing:
                return
            self.playing.add(game_id)
        threading.Thread(target=self.play, args=(game_id,), daemon=True).start()

    def play(self, game_id: str) -> None:
        gid = UUID(game_id)
        view: View = expect(200, GameView, get_game.sync_detailed(
            gid, client=self.client), f"game {game_id}")
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
    match = expect(201, MatchView, create_match.sync_detailed(client=runner.client, body=body),
                   "create match")
    say(f"match {match.id}: {args.deals} deals of {args.preset} against {args.opponent}, "
        f"{args.parallel} at a time")
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
            return
        if match.status not in ("waiting", "running"):
            fail(f"match {match.id} is {match.status}")


def main() -> None:
    parser = argparse.ArgumentParser(description="A bot account that plays every game it is given.")
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--key", default=os.environ.get("DOMINO_KEY"),
                        help="the player's key (default: $DOMINO_KEY; none: a new bot account)")
    parser.add_argument("--name", help="the new bot account's name (default: py-runner-<random>)")
    sub = parser.add_subparsers(dest="command")
    m = sub.add_parser("match", help="a duplicate match against a built-in level")
    m.add_argument("--opponent", default="greedy", help="random, greedy or expert")
    m.add_argument("--preset", default="block", choices=[p.value for p in CreateMatchPreset])
    m.add_argument("--deals", type=int, default=10)
    m.add_argument("--parallel", type=int, default=2)
    m.add_argument("--rules", help="rules overrides as JSON, e.g. '{\"target\": null, \"rounds\": 1}'")
    m.add_argument("--rated", action="store_true")
    m.add_argument("--key", default=argparse.SUPPRESS, help="as above")
    args = parser.parse_args()

    key: str | None = args.key
    if key is None:
        account = expect(201, PlayerKey, create_player.sync_detailed(
            client=Client(base_url=args.url),
            body=CreatePlayer(name=args.name or f"py-runner-{secrets.token_hex(4)}", bot=True)),
            "create player")
        key = account.key
        say(f"bot account {account.player.name} created; its key, shown once (keep it, "
            f"then run with --key or DOMINO_KEY):\n{key}")
    client = AuthenticatedClient(base_url=args.url, token=key)
    me = expect(200, PlayerProfile, my_profile.sync_detailed(client=client), "me")
    say(f"playing as {me.name}")

    runner = Runner(client)
    threading.Thread(target=runner.listen, daemon=True).start()
    if args.command != "match":
        threading.Event().wait()  # play for ever (Ctrl-C ends it)
    if not runner.connected.wait(timeout=30):  # the stream first: game_started is not replayed
        fail("events: not connected after 30 s")
    run_match(runner, args)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
