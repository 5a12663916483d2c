// Opens the cross-origin page in headless Chromium and checks how it ended:
//   node check.js <page URL> played   -> the page must say "move played"
//   node check.js <page URL> blocked  -> the page's first fetch must fail (no CORS)
const { chromium } = require('playwright-core');
const [url, want] = process.argv.slice(2);
(async () => {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  const page = await browser.newPage();
  const console_ = [];
  page.on('console', m => console_.push(m.text()));
  await page.goto(url);
  await page.waitForSelector('#status[data-done]', { timeout: 20000 });
  const status = await page.locator('#status').innerText();
  const log = await page.locator('#log').innerText();
  await browser.close();
  console.log(`cross-origin check (${want}): ${status}`);
  if (log.trim()) console.log(log.trim().split('\n').map(l => '  ' + l).join('\n'));
  const ok = want === 'played'
    ? status.startsWith('move played')
    // A refused CORS request reaches the script as a TypeError with no answer to read.
    : status.startsWith('failed: TypeError') && log.trim() === '';
  if (!ok) {
    console.error(`expected the page to end "${want}"; the browser console said:\n${console_.join('\n')}`);
    process.exit(1);
  }
  if (want === 'blocked') console.log(`  the browser said: ${console_.find(l => /CORS/.test(l)) ?? '(nothing about CORS)'}`);
})().catch(e => { console.error(e); process.exit(2); });
