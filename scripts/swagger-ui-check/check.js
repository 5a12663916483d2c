// Drives the Swagger UI served by the binary, as a person would, through "Try it out".
const { chromium } = require('playwright-core');
const BASE = process.argv[2];
(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const page = await browser.newPage({ viewport: { width: 1300, height: 2200 } });
  const external = [];
  page.on('request', r => { if (!r.url().startsWith(BASE)) external.push(r.url()); });
  // The pages' Content-Security-Policy must let the UI do everything it does.
  const refused = [];
  page.on('console', m => { if (/Content Security Policy/i.test(m.text())) refused.push(m.text()); });
  await page.goto(BASE + '/swagger-ui');
  await page.waitForSelector('#operations-lobby-create_game', { timeout: 15000 });

  async function run(opId, fill) {
    const op = page.locator(`#operations-${opId}`);
    if (!(await op.locator('.try-out__btn').isVisible())) await op.locator('.opblock-summary').click();
    await op.locator('.try-out__btn').click();
    await fill(op);
    await op.locator('button.execute').click();
    await op.locator('.live-responses-table .response .response-col_status').first().waitFor({ timeout: 10000 });
    const status = (await op.locator('.live-responses-table .response .response-col_status').first().innerText()).trim();
    const body = await op.locator('.live-responses-table .response .microlight').first().innerText();
    return { status, body: JSON.parse(body) };
  }

  const created = await run('lobby-create_game', async op => {
    await op.locator('textarea.body-param__text').fill('{"preset": "classic", "bots": [{"seat": 1, "level": "greedy"}]}');
  });
  console.log('create', created.status, created.body.status);
  const id = created.body.game_id;
  const seat = await run('lobby-take_seat', async op => {
    await op.locator('tr[data-param-name="id"] input').fill(id);
    await op.locator('textarea.body-param__text').fill('{"name": "swagger"}');
  });
  console.log('seat', seat.status, seat.body.seat, seat.body.view.status);
  // Authorize with the seat token.
  await page.locator('button.authorize').first().click();
  // Two schemes are offered (the player's key, the seat's token): this is the seat's.
  const seatAuth = page.locator('.auth-container').filter({ hasText: 'seat_token' });
  await seatAuth.locator('input[type="text"], input[type="password"]').first().fill(seat.body.token);
  await seatAuth.locator('button.authorize').click();
  await page.locator('button.btn-done').first().click();
  const view = await run('play-get_game', async op => {
    await op.locator('tr[data-param-name="id"] input').fill(id);
  });
  console.log('view', view.status, 'hand', view.body.hand.length, 'your_turn', view.body.your_turn);
  const move = view.body.legal_moves[0];
  const moved = await run('play-make_move', async op => {
    await op.locator('tr[data-param-name="id"] input').fill(id);
    await op.locator('textarea.body-param__text').fill(JSON.stringify(move));
  });
  console.log('move', JSON.stringify(move), '->', moved.status, 'version', moved.body.version, 'events', moved.body.events.length);
  await page.screenshot({ path: '/tmp/swcheck/swagger.png' });
  console.log('requests outside the server:', external.length);
  console.log('refused by the Content-Security-Policy:', refused.length, refused.join('\n'));
  await browser.close();
  process.exit(moved.status === '200' && seat.status === '201' && created.status === '201' && external.length === 0 && refused.length === 0 ? 0 : 1);
})().catch(e => { console.error(e); process.exit(2); });
