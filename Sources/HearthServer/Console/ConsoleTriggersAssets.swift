extension ConsoleAssets {
    /// The Triggers screen: one row per trigger (name, event, ref, url, pending, age of the
    /// oldest pending, dead letters, last error, and its oldest pending event: id, ref,
    /// attempts, last error, with a Park button), then the dead letters, each with a Resend
    /// button (and one for all shown). Refreshed every 5 s while open; the button that had
    /// the keyboard's focus has it again after each refresh.
    static let triggersJS = """
        const REFRESH_MS = 5000;
        const element = (tag, props = {}, ...children) => {
          const node = Object.assign(document.createElement(tag), props);
          node.append(...children);
          return node;
        };
        const when = (ms) => new Date(Number(ms)).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
        const age = (ms) => {
          const seconds = Math.max(0, Math.round(ms / 1000));
          if (seconds < 120) return `${seconds} s`;
          if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
          return `${Math.round(seconds / 3600)} h`;
        };
        const bytes = (n) => {
          const value = Number(n);
          if (value < 1024) return `${value} B`;
          if (value < 1048576) return `${(value / 1024).toFixed(1)} KiB`;
          return `${(value / 1048576).toFixed(1)} MiB`;
        };
        const table = (className, titles, rows) => element('table', { className },
          element('tr', {}, ...titles.map((t) => element('th', { textContent: t }))), ...rows);

        export class TriggersScreen {
          constructor(main, api, announce) {
            this.main = main;
            this.api = api;
            this.announce = announce;
            this.timer = null;
          }

          open() {
            this.main.replaceChildren();
            this.triggers = element('section', { id: 'triggers' });
            this.dead = element('section', { id: 'dead-letters' });
            this.dead.setAttribute('aria-live', 'polite');
            this.main.append(element('h2', { textContent: this.api.titled('Triggers') }), this.triggers,
              element('h2', { textContent: 'Dead letters' }), this.dead);
            this.refresh();
            this.timer = setInterval(() => this.refresh(), REFRESH_MS);
          }

          close() {
            clearInterval(this.timer);
            this.timer = null;
          }

          async refresh() {
            const asked = (this.asked = (this.asked || 0) + 1);
            let answer;
            try {
              answer = await this.api.triggers();
            } catch (error) {
              return this.announce(error.message);
            }
            if (asked !== this.asked || !this.timer) return;
            // A redraw replaces every button: the one that had the keyboard's focus is
            // found again by its key and focused, so a keyboard user is not sent back to
            // the top of the page every REFRESH_MS.
            const focusKey = this.main.contains(document.activeElement) ? document.activeElement.dataset.focusKey : undefined;
            this.draw(answer);
            if (focusKey && !this.main.contains(document.activeElement)) {
              this.main.querySelector(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
            }
          }

          draw(answer) {
            if (!answer.configured) {
              this.triggers.replaceChildren(element('p', { textContent: 'No triggers file is set (hearth serve --triggers FILE).' }));
              this.dead.replaceChildren();
              return;
            }
            const park = (event) => {
              const button = element('button', { type: 'button', className: 'park', textContent: 'Park' });
              button.dataset.focusKey = `park-${event.id}`;
              button.addEventListener('click', async () => {
                button.disabled = true;
                try {
                  const result = await this.api.parkEvents([event.id]);
                  this.announce(result.parked ? `Parked event ${event.id}: resend it from the dead letters` : `Event ${event.id} is no longer pending`);
                } catch (error) {
                  this.announce(error.message);
                }
                await this.refresh();
              });
              return button;
            };
            const oldest = (t) => {
              const event = t.oldest;
              if (!event) return element('td', { className: 'oldest', textContent: '–' });
              const summary = `#${event.id} ${event.ref || ''} · ${event.attempts} attempt(s)` + (event.lastError ? ` · ${event.lastError}` : '');
              return element('td', { className: 'oldest' }, element('span', { textContent: summary + ' ' }), park(event));
            };
            this.triggers.replaceChildren(table('triggers', ['Name', 'Event', 'Ref', 'URL', 'Pending', 'Oldest pending', 'Dead', 'Stored / budget', 'Last error', 'Oldest pending event'],
              answer.triggers.map((t) => element('tr', { className: 'trigger-row' },
                element('td', { textContent: t.name }), element('td', { textContent: t.event || '(not declared)' }),
                element('td', { textContent: t.ref || '–' }), element('td', { textContent: t.url || '–' }),
                element('td', { className: 'pending', textContent: String(t.pending) }),
                element('td', { textContent: t.oldestPendingAt ? age(answer.now - t.oldestPendingAt) : '–' }),
                element('td', { className: 'dead', textContent: String(t.dead) }),
                element('td', { className: 'stored', textContent: bytes(t.storedBytes) + ' / ' + (t.maxStoredBytes ? bytes(t.maxStoredBytes) : '–') }),
                element('td', { className: 'last-error', textContent: t.lastError || '–' }), oldest(t)))));
            if (answer.dead.length === 0) {
              this.dead.replaceChildren(element('p', { textContent: 'None.' }));
              return;
            }
            const resend = (ids, label, key) => {
              const button = element('button', { type: 'button', textContent: label });
              button.dataset.focusKey = key;
              button.addEventListener('click', async () => {
                button.disabled = true;
                try {
                  const result = await this.api.resendDeadLetters(ids);
                  this.announce(`Resent ${result.resent} dead letter(s)`);
                } catch (error) {
                  this.announce(error.message);
                }
                await this.refresh();
              });
              return button;
            };
            this.dead.replaceChildren(
              table('triggers dead-letters', ['Id', 'Trigger', 'Ref', 'Reason', 'Attempts', 'Last error', 'Died', ''],
                answer.dead.map((d) => element('tr', { className: 'dead-row' },
                  element('td', { textContent: String(d.id) }), element('td', { textContent: d.trigger }),
                  element('td', { textContent: d.ref || '–' }), element('td', { textContent: d.reason }),
                  element('td', { textContent: String(d.attempts) }), element('td', { textContent: d.lastError || '–' }),
                  element('td', { textContent: when(d.diedAt) }), element('td', {}, resend([d.id], 'Resend', `resend-${d.id}`))))),
              resend(answer.dead.map((d) => d.id), `Resend all ${answer.dead.length} shown`, 'resend-all'));
          }
        }

        """
}
