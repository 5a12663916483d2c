// How every page names who sits at a table: a built-in level by its level ("greedy", as
// the leaderboards and tournaments name it) with a "bot" badge, a player by its name
// linking to its page, an anonymous seat by the name it took, as text.

/** The API's lists name a level's seat "<level> bot"; no other seat may take such a name. */
const LEVEL_SEAT = /^(random|greedy|expert|master) bot$/;

/** The level a seat's name says it is, or null. */
export function levelOf(name) {
  return LEVEL_SEAT.exec(name ?? '')?.[1] ?? null;
}

/** A seat's name as the pages show it: a level's seat by its level. */
export function shownName(name) {
  return levelOf(name) ?? name;
}

function badge(text, className = 'badge') {
  return Object.assign(document.createElement('span'), { className, textContent: text });
}

/**
 * One seat's name as an element: a player's (`playerId`) or a level's linking to its page,
 * a level's with a "bot" badge; `null` a free seat.
 */
export function nameNode(name, playerId) {
  const span = document.createElement('span');
  span.className = 'who';
  if (name == null) {
    span.append(badge('free seat', 'free'));
    return span;
  }
  const level = levelOf(name);
  if (level || playerId) {
    const a = document.createElement('a');
    a.href = `/players/${encodeURIComponent(level ?? name)}`;
    a.className = 'player';
    a.textContent = level ?? name;
    span.append(a);
    if (level) span.append(' ', badge('bot'));
  } else {
    span.append(name);
  }
  return span;
}
