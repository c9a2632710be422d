import HearthDatabase

extension ConsoleAssets {
    /// The Profile screen: a duration, Start (a window on this node for the chosen
    /// namespace, `POST /console/api/profile`), Stop now; at the window's end (or on Stop)
    /// the report's tables, as `hearth profile` prints them (docs/profiling.md).
    static let profileJS = """
        const element = (tag, props = {}, ...children) => {
          const node = Object.assign(document.createElement(tag), props);
          node.append(...children);
          return node;
        };
        const cell = (value) => element('td', { textContent: value === undefined || value === null ? '–' : String(value) });
        const section = (title, className, titles, rows) => element('section', { className: 'profile-section' },
          element('h3', { textContent: title }),
          rows.length === 0 ? element('p', { textContent: 'None.' })
            : element('table', { className: `profile ${className}` },
              element('tr', {}, ...titles.map((t) => element('th', { textContent: t }))),
              ...rows.map((row) => element('tr', {}, ...row.map(cell)))));

        export class ProfileScreen {
          constructor(main, api, announce) {
            this.main = main;
            this.api = api;
            this.announce = announce;
            this.timer = null;
          }

          open() {
            this.main.replaceChildren();
            this.duration = element('input', { type: 'number', min: '1', max: '\(Profiler.Limits.maxDurationSeconds)', value: '10', id: 'profile-duration' });
            this.start = element('button', { type: 'button', textContent: 'Start' });
            this.stop = element('button', { type: 'button', textContent: 'Stop now', disabled: true });
            this.status = element('p', { id: 'profile-status' });
            this.status.setAttribute('aria-live', 'polite');
            this.report = element('section', { id: 'profile-report' });
            this.start.addEventListener('click', () => this.begin());
            this.stop.addEventListener('click', () => this.finish());
            this.main.append(element('h2', { textContent: this.api.titled('Profile') }),
              element('p', { textContent: 'Records what this node does on this namespace for a window: operations by kind and path, bandwidth, unindexed queries, denials, rules and the slowest operations.' }),
              element('label', {}, 'Duration (seconds) ', this.duration), ' ', this.start, ' ', this.stop, this.status, this.report);
          }

          close() {
            clearTimeout(this.timer);
            this.timer = null;
          }

          async begin() {
            const seconds = Number(this.duration.value);
            try {
              await this.api.profile('start', seconds);
            } catch (error) {
              return this.announce(error.message);
            }
            this.start.disabled = true;
            this.stop.disabled = false;
            this.report.replaceChildren();
            this.status.textContent = `Recording for ${seconds} s…`;
            this.timer = setTimeout(() => this.finish(), seconds * 1000 + 250);
          }

          async finish() {
            clearTimeout(this.timer);
            this.timer = null;
            let report;
            try {
              report = await this.api.profile('stop');
            } catch (error) {
              this.start.disabled = false;
              this.stop.disabled = true;
              return this.announce(error.message);
            }
            this.start.disabled = false;
            this.stop.disabled = true;
            this.render(report);
          }

          render(report) {
            const node = report.node || {};
            const seconds = ((report.endedAt - report.startedAt) / 1000).toFixed(1);
            this.status.textContent = `Recorded ${seconds} s on ${node.hostname} (${node.address})` + (node.sharedEngine ? ': this node only; every node of a shared engine profiles itself.' : '.');
            const ops = report.operations;
            this.report.replaceChildren(
              section('Speed (by operation and path)', 'profile-speed', ['Operation', 'Path', 'Count', 'Mean ms', 'p50 ms', 'p99 ms'],
                [...ops].sort((a, b) => b.count - a.count).map((o) => [o.kind, o.path, o.count, o.meanMs, o.p50Ms, o.p99Ms])),
              section('Bandwidth (by operation and path)', 'profile-bandwidth', ['Operation', 'Path', 'Bytes in', 'Bytes out'],
                [...ops].sort((a, b) => (b.bytesIn + b.bytesOut) - (a.bytesIn + a.bytesOut)).map((o) => [o.kind, o.path, o.bytesIn, o.bytesOut])),
              section('Unindexed queries', 'profile-unindexed', ['Path', 'Add .indexOn', 'Count'],
                report.unindexedQueries.map((u) => [u.path, u.indexOn, u.count])),
              section('Permission denials', 'profile-denials', ['Operation', 'Path', 'Rule', 'Count'],
                report.denials.map((d) => [d.operation, d.path, d.rule, d.count])),
              section('Most expensive rules', 'profile-rules', ['Rule', 'Evaluations', 'Total ms', 'Mean ms'],
                report.rules.map((r) => [r.rule, r.count, r.totalMs, r.meanMs])),
              section('Slowest operations', 'profile-slowest', ['Operation', 'Path', 'ms'],
                report.slowest.map((s) => [s.kind, s.path, s.ms])));
          }
        }

        """
}
