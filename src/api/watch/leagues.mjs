// Every league, `/leagues`, newest first, each linking to its page; a page at a time
// (`?page=N`). To enter one: docs/bots.md, "Leagues".

import { listLeagues } from './api.mjs';
import { leagueItem } from './lists.mjs';

const $ = (id) => document.getElementById(id);
const PER_PAGE = 50;
const page = Math.max(1, Number.parseInt(new URLSearchParams(location.search).get('page') ?? '1', 10) || 1);

function pageLink(id, n) {
  const a = $(id);
  a.href = n > 1 ? `/leagues?page=${n}` : '/leagues';
  a.hidden = false;
}

async function show() {
  try {
    const list = await listLeagues(page, PER_PAGE);
    $('leagues').replaceChildren(...list.leagues.map(leagueItem));
    $('summary').textContent = list.leagues.length ? '' : page > 1 ? 'None this far back.' : 'No league yet.';
    if (page > 1) pageLink('newer', page - 1);
    if (list.leagues.length === PER_PAGE) pageLink('older', page + 1);
  } catch (err) {
    $('summary').textContent = `Could not list the leagues: ${err.message}`;
  }
  $('page').dataset.ready = 'true';
}

show();
