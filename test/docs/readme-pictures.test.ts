import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { linearChartSvg, runsFromMarkdown } from '../../bench/chart.js';
import { meanRows } from '../../bench/report.js';

const ROOT = new URL('../../', import.meta.url);

/**
 * The README's benchmark chart (scripts/readme-pictures.ts): the runs saved in
 * docs/benchmarks.md read back, their mean drawn on linear axes with the
 * targets marked. The committed picture is what the script makes of them.
 */
describe('README pictures: the benchmark chart', () => {
  const markdown = readFileSync(new URL('docs/benchmarks.md', ROOT), 'utf8');

  it('reads every run table of docs/benchmarks.md back, with each row\'s ceiling and peer', () => {
    const { runs, measured } = runsFromMarkdown(markdown);
    assert.ok(runs.length >= 1);
    assert.match(measured, /^\d{4}-\d\d-\d\d$/);
    const rows = runs[0]!.rows;
    const cc = rows.find((r) => r.id === 'cc' && r.db === 'sqlite');
    assert.ok(cc && cc.figures.rps > 0);
    assert.equal(cc.peer, 'peer-cc');
    assert.equal(cc.ceiling, 'fastify');
    assert.equal(rows.find((r) => r.id === 'introspect-opaque' && r.db === 'sqlite')?.peer, 'peer-introspect');
    assert.equal(rows.find((r) => r.id === 'user' && r.db === 'sqlite')?.ceiling, 'api-healthz');
  });

  it('draws linear axes from zero with the targets at their values; the committed SVG is current', () => {
    const { runs, measured } = runsFromMarkdown(markdown);
    const rows = meanRows(runs);
    const svg = linearChartSvg(rows, `Gatehouse vs node-oidc-provider vs the ceiling: ${runs.length > 1 ? `mean of ${runs.length} runs` : 'one run'}, ${measured} (docs/benchmarks.md)`);
    const peer = rows.find((r) => r.id === 'peer-cc')!.figures.rps;
    const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
    // The speed issue's targets (bench/targets.ts), in req/s on the group's own axis.
    assert.ok(svg.includes(`target: 3× the peer, SQLite = ${fmt(peer * 3)} req/s`), 'the client_credentials target, on SQLite only (the issue table: SQLite unless named)');
    assert.ok(svg.includes('target: 150 logins/s'));
    assert.ok(svg.includes('target: 10 ms') && svg.includes('target: 20 ms'));
    assert.ok(!svg.includes('logarithmic'));
    // Every axis starts at 0 and its ticks are evenly spaced (linear).
    assert.equal((svg.match(/class="a">0<\/text>/g) ?? []).length, (svg.match(/class="g">/g) ?? []).length);
    assert.equal(readFileSync(new URL('docs/img/benchmarks.svg', ROOT), 'utf8'), svg, 'docs/img/benchmarks.svg is stale: npm run docs:pictures');
  });
});
