// The table as a model, no DOM: a view's layout turned into the chains the geometry lays
// out, a layout built up play by play (for replays and tests), and moves told in words.

import { shownName } from './names.mjs';

/** "a-b" as two numbers. */
export function halves(text) {
  const [a, b] = text.split('-').map(Number);
  return [a, b];
}

/** "a-b" with a <= b: how the page names a face-up tile in `data-tile`. */
export function canonical(text) {
  const [a, b] = halves(text);
  return a <= b ? `${a}-${b}` : `${b}-${a}`;
}

const isDouble = (text) => {
  const [a, b] = halves(text);
  return a === b;
};

/** One tile of a chain: `near` faces the root. */
function link(near, far) {
  return { near, far, double: near === far, tile: canonical(`${near}-${far}`) };
}

const fromArm = (text) => link(...halves(text));
const flipped = (text) => {
  const [a, b] = halves(text);
  return link(b, a);
};

/**
 * Where the spinner lies in a view's layout: {arm: null} for the lead, {arm, index} in
 * the left or right arm, or null. `playedDoubles` lists the round's doubles in the order
 * they were played, when known (the log tells it); without it, a double in an arm is
 * taken for the spinner when it is the only candidate, else the one nearest the lead.
 */
export function findSpinner(layout, rules, playedDoubles = []) {
  if (!layout?.lead || rules?.spinner !== 'first_double') return null;
  if (isDouble(layout.lead)) return { arm: null };
  const where = (tile) => {
    for (const arm of ['left', 'right']) {
      const index = layout.arms[arm].findIndex((t) => canonical(t) === tile);
      if (index >= 0) return { arm, index };
    }
    return null;
  };
  for (const tile of playedDoubles) {
    const at = where(canonical(tile));
    if (at) return at;
  }
  let best = null;
  for (const arm of ['left', 'right']) {
    const index = layout.arms[arm].findIndex(isDouble);
    if (index >= 0 && (best === null || index < best.index)) best = { arm, index };
  }
  return best;
}

/**
 * A view's layout as the geometry's table: the spinner (or the lead) at the root, and the
 * chains east, west, north and south of it.
 */
export function tableOf(layout, spinner) {
  if (!layout?.lead) return { root: null, spinner: false, chains: {} };
  const { left, right, up, down } = layout.arms;
  const [lo, hi] = halves(layout.lead);
  // The lead's left half is the one the left arm grows from.
  const leadWest = left.length ? halves(left[0])[0] : right.length ? otherOf(layout.lead, halves(right[0])[0]) : lo;
  const leadEast = otherOf(layout.lead, leadWest);
  if (!spinner || spinner.arm === null) {
    return {
      root: link(leadWest, leadEast),
      spinner: Boolean(spinner),
      chains: {
        east: right.map(fromArm),
        west: left.map(fromArm),
        north: up.map(fromArm),
        south: down.map(fromArm),
      },
    };
  }
  const { arm, index } = spinner;
  const arms = { left, right };
  const own = arms[arm];
  const other = arm === 'left' ? right : left;
  // From the spinner back to the lead, then on along the other arm.
  const back = [...own.slice(0, index).reverse().map(flipped)];
  back.push(arm === 'left' ? link(leadWest, leadEast) : link(leadEast, leadWest));
  back.push(...other.map(fromArm));
  const beyond = own.slice(index + 1).map(fromArm);
  const s = halves(own[index])[0];
  return {
    root: link(s, s),
    spinner: true,
    chains: {
      east: arm === 'left' ? back : beyond,
      west: arm === 'left' ? beyond : back,
      north: up.map(fromArm),
      south: down.map(fromArm),
    },
  };
}

function otherOf(text, value) {
  const [a, b] = halves(text);
  return a === value ? b : a;
}

/**
 * A layout built up play by play, as the engine builds it, in the view's shape: for a
 * replay, and for making layouts to test the geometry with.
 */
export class LayoutBuilder {
  constructor(rules) {
    this.rules = rules;
    this.lead = null;
    this.arms = { left: [], right: [], up: [], down: [] };
    this.open = {};
    this.spinner = null;
    this.doubles = [];
  }

  get layout() {
    return { lead: this.lead, arms: this.arms, ends: this.ends(), count: null };
  }

  /** The open ends, each {end, value}. */
  ends() {
    if (!this.lead) return [];
    const names = this.upDownOpen() ? ['left', 'right', 'up', 'down'] : ['left', 'right'];
    return names.map((end) => ({ end, value: this.open[end] }));
  }

  upDownOpen() {
    if (!this.spinner) return false;
    if (this.spinner.arm === null) return this.arms.left.length > 0 && this.arms.right.length > 0;
    return this.arms[this.spinner.arm].length > this.spinner.index + 1;
  }

  play(tile, end) {
    const [a, b] = halves(tile);
    const double = a === b;
    if (double) this.doubles.push(canonical(tile));
    if (!this.lead) {
      this.lead = canonical(tile);
      const [lo, hi] = halves(this.lead);
      this.open = { left: lo, right: hi };
      if (double && this.rules.spinner === 'first_double') {
        this.spinner = { arm: null };
        this.open.up = lo;
        this.open.down = lo;
      }
      return;
    }
    const inner = this.open[end];
    if (inner !== a && inner !== b) throw new Error(`${tile} does not fit the ${end} end (${inner})`);
    const outer = inner === a ? b : a;
    this.arms[end].push(`${inner}-${outer}`);
    this.open[end] = outer;
    if (double && !this.spinner && this.rules.spinner === 'first_double' && (end === 'left' || end === 'right')) {
      this.spinner = { arm: end, index: this.arms[end].length - 1 };
      this.open.up = outer;
      this.open.down = outer;
    }
  }

  /** Every (tile, end) that fits now. */
  fits(tile) {
    const [a, b] = halves(tile);
    return this.ends()
      .filter(({ value }) => value === a || value === b)
      .map(({ end }) => end);
  }
}

/** A seat's name as the page shows it: a built-in level by its level, as on every page. */
export function seatName(view, seat) {
  const s = view?.seats?.[seat];
  if (!s) return `seat ${seat}`;
  if (s.name) return shownName(s.name);
  if (s.bot) return s.bot;
  return `seat ${seat}`;
}

const sideName = (view, side) =>
  view?.rules?.teams ? `team ${side === 0 ? 'A' : 'B'} (seats ${side} and ${side + 2})` : seatName(view, side);

/** A log entry's events (or a bare move) told in words, one line each. */
export function describeEvents(view, events) {
  const lines = [];
  for (const e of events) {
    const who = seatName(view, e.seat);
    switch (e.type) {
      case 'played': {
        const where = e.end ? ` on the ${e.end} end` : ' to lead';
        const pts = e.points ? (e.credited ? `, scoring ${e.points}` : `, making ${e.points} unclaimed`) : '';
        lines.push(`${who} played ${e.tile}${where}${pts}`);
        break;
      }
      case 'drew':
        lines.push(e.tile ? `${who} drew ${e.tile}` : `${who} drew a tile`);
        break;
      case 'passed':
        lines.push(`${who} passed`);
        break;
      case 'muggins_taken':
        lines.push(`${who} called muggins on ${seatName(view, e.from)}: ${e.points} points`);
        break;
      case 'timed_out':
        lines.push(`${who} ran out of time; a bot moved for them`);
        break;
      case 'abandoned':
        lines.push(`${who} left: a bot plays the seat to the end`);
        break;
      case 'resigned':
        lines.push(`${who} resigned`);
        break;
      case 'round_started':
        lines.push(`Round ${e.round} begins: ${seatName(view, e.leader)} leads${e.start_tile ? ` onto ${e.start_tile}` : ''}`);
        break;
      case 'round_ended':
        lines.push(describeRound(view, e.result));
        break;
      case 'match_ended':
        lines.push(describeMatch(view, e.result));
        break;
      default:
        break;
    }
  }
  return lines;
}

/** A round's result in one sentence. */
export function describeRound(view, r) {
  const how = { domino: 'domino', blocked: 'blocked', stuck: 'stuck' }[r.reason] ?? r.reason;
  const winner = r.winner == null ? 'nobody wins it' : `${sideName(view, r.winner)} wins it`;
  const unit = view?.rules?.scoring === 'penalty' ? ' penalty' : '';
  const awards = r.awards.map((a, i) => (a ? `${sideName(view, i)} +${a}${unit}` : null)).filter(Boolean);
  return `Round ${r.number} over (${how}): ${winner}${awards.length ? `; ${awards.join(', ')}` : ''}`;
}

/** The match's result in one sentence. */
export function describeMatch(view, result) {
  const why = { target: 'target reached', rounds: 'last round played', timeout: 'out of time', resigned: 'resignation' }[result.reason] ?? result.reason;
  const scores = result.scores.join(' – ');
  if (result.winner == null) return `Match drawn (${why}), ${scores}`;
  return `${sideName(view, result.winner)} wins the match (${why}), ${scores}`;
}
