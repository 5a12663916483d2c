// Every tournament, `/tournaments`: those running, those registering (to join: see
// docs/tournaments.md) and those finished, newest first, each linking to its page; the
// finished a page at a time (`?page=N`).

import { listTournaments } from './api.mjs';
import { tournamentItem } from './lists.mjs';

const PER_PAGE = 50;
const page = Math.max(1, Number.parseInt(new URLSearchParams(location.search).get('page') ?? '1', 10) || 1);
const EMPTY = { running: 'None running right now.', registering: 'None open to join right now.', finished: 'None finished yet.' };

async function showStatus(section) {
  const status = section.dataset.status;
  const paged = status === 'finished';
  const summary = section.querySelector('.summary');
  try {
    const list = await listTournaments(status, paged ? page : 1, PER_PAGE);
    section.querySelector('ul').replaceChildren(...list.tournaments.map(tournamentItem));
    summary.textContent = list.tournaments.length ? '' : paged && page > 1 ? 'None this far back.' : EMPTY[status];
    if (paged) {
      const link = (cls, n) => {
        const a = section.querySelector(cls);
        a.href = n > 1 ? `/tournaments?page=${n}` : '/tournaments';
        a.hidden = false;
      };
      if (page > 1) link('.prev', page - 1);
      if (list.tournaments.length === PER_PAGE) link('.next', page + 1);
    }
  } catch (err) {
    summary.textContent = `Could not list them: ${err.message}`;
  }
}

Promise.all([...document.querySelectorAll('section[data-status]')].map(showStatus)).then(() => {
  document.getElementById('page').dataset.ready = 'true';
});
