/// The admin console's files, compiled into the binary (no CDN, no build step at
/// run time): plain HTML, CSS and JavaScript modules, one module per screen and one small
/// API client. The CSP forbids inline script and style, so there is none.
enum ConsoleAssets {
    struct File: Sendable {
        let contentType: String
        let body: String
    }

    static let files: [String: File] = [
        "index.html": File(contentType: "text/html; charset=utf-8", body: indexHTML),
        "console.css": File(contentType: "text/css; charset=utf-8", body: css),
        "api.js": File(contentType: "text/javascript; charset=utf-8", body: apiJS),
        "app.js": File(contentType: "text/javascript; charset=utf-8", body: appJS),
        "signin.js": File(contentType: "text/javascript; charset=utf-8", body: signInJS),
        "data.js": File(contentType: "text/javascript; charset=utf-8", body: dataJS),
        "rules.js": File(contentType: "text/javascript; charset=utf-8", body: rulesJS),
        "users.js": File(contentType: "text/javascript; charset=utf-8", body: usersJS),
        "health.js": File(contentType: "text/javascript; charset=utf-8", body: healthJS),
        "triggers.js": File(contentType: "text/javascript; charset=utf-8", body: triggersJS),
        "profile.js": File(contentType: "text/javascript; charset=utf-8", body: profileJS),
    ]

    static let indexHTML = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Hearth console</title>
        <link rel="stylesheet" href="console.css">
        <script type="module" src="app.js"></script>
        </head>
        <body>
        <header>
          <h1>Hearth</h1>
          <nav id="nav" aria-label="Screens" hidden><button type="button" data-screen="data">Data</button><button type="button" data-screen="rules">Rules</button><button type="button" data-screen="users">Users</button><button type="button" data-screen="triggers">Triggers</button><button type="button" data-screen="profile">Profile</button><button type="button" data-screen="health">Health</button></nav>
          <label id="namespace-picker" hidden>Database <select id="namespace"></select></label>
          <span id="who"></span>
          <button id="sign-out" type="button" hidden>Sign out</button>
        </header>
        <div id="alert" role="alert" aria-live="assertive"></div>
        <main id="main"></main>
        </body>
        </html>

        """

    static let css = """
        :root { font-family: system-ui, sans-serif; color: #1d1d1f; background: #fafafa; }
        body { margin: 0; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: 0.5rem 1rem; background: #2d2a26; color: #fff; }
        header h1 { font-size: 1.1rem; margin: 0; }
        header nav { display: flex; flex-wrap: wrap; gap: 0.5rem; flex: 1; }
        header nav a { color: #fff; }
        #who { margin-left: auto; }
        main { padding: 1rem; max-width: 60rem; }
        #alert:not(:empty) { margin: 1rem; padding: 0.5rem 1rem; border: 1px solid #b00020; color: #b00020; background: #fff0f0; }
        form.signin { display: grid; gap: 0.5rem; max-width: 20rem; }
        label { display: grid; gap: 0.25rem; }
        input, button, textarea { font: inherit; padding: 0.3rem 0.5rem; }
        button:focus-visible, a:focus-visible, input:focus-visible { outline: 3px solid #e8a33d; }
        ul.tree, ul.tree ul { list-style: none; padding-left: 1.25rem; margin: 0; }
        ul.tree { padding-left: 0; }
        ul.tree li { margin: 0.2rem 0; }
        .key { font-weight: 600; }
        /* Keys, values, emails, uids and authors are the data's own text: each is a bidi
           isolate (a <bdi>, or a cell, button or block of its own), so a right-to-left
           override inside cannot reorder the controls after it, and a long one wraps
           anywhere rather than pushing the controls out of view. */
        .key, .value, table.users td, dl.user dd, #user-details h3, #user-details p, ol.history bdi { overflow-wrap: anywhere; }
        .value { font-family: ui-monospace, monospace; margin-right: 0.5rem; }
        li button { margin-left: 0.25rem; font-size: 0.8rem; padding: 0.05rem 0.4rem; }
        li button.toggle { margin: 0 0.25rem 0 0; width: 1.6rem; }
        form.add { display: flex; gap: 0.25rem; margin: 0.25rem 0 0.25rem 1.25rem; }
        form.add input { font-size: 0.85rem; }
        .transfer { margin: 0.25rem 0 0.25rem 1.25rem; font-size: 0.85rem; }
        header nav button { background: none; color: #fff; border: 1px solid #777; }
        header nav button[aria-current="page"] { border-color: #e8a33d; }
        header #namespace-picker { display: flex; align-items: center; gap: 0.4rem; }
        header #namespace-picker[hidden] { display: none; }
        .rules-editor { display: grid; gap: 0.5rem; }
        .rules-editor textarea { font-family: ui-monospace, monospace; font-size: 0.9rem; min-height: 14rem; }
        pre.highlight { background: #fff; border: 1px solid #ddd; padding: 0.5rem; overflow: auto; max-height: 16rem; }
        .tok-key { color: #7a3e9d; } .tok-string { color: #2a7d2a; } .tok-number { color: #1c5fb0; }
        .tok-literal { color: #b0501c; } .tok-comment { color: #888; font-style: italic; }
        .diff-add { background: #e6ffec; } .diff-remove { background: #ffebe9; }
        form.simulator { display: grid; grid-template-columns: max-content 1fr; gap: 0.4rem 0.75rem; max-width: 40rem; }
        form.simulator button { grid-column: 2; justify-self: start; }
        .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(17rem, 1fr)); gap: 1rem; }
        .chart { background: #fff; border: 1px solid #ddd; padding: 0.5rem 0.75rem; }
        .chart h3 { font-size: 0.95rem; margin: 0 0 0.25rem; }
        .chart .now { font-family: ui-monospace, monospace; font-size: 1.2rem; }
        .chart svg { width: 100%; height: 3rem; }
        table.users, table.triggers, table.profile { border-collapse: collapse; margin: 0.5rem 0; }
        table.triggers th, table.triggers td, table.profile th, table.profile td { text-align: left; padding: 0.2rem 0.6rem; border-bottom: 1px solid #ddd; overflow-wrap: anywhere; }
        table.users th, table.users td { text-align: left; padding: 0.2rem 0.6rem; border-bottom: 1px solid #ddd; }
        dl.user { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
        dl.user dt { font-weight: 600; }
        .verdict-allowed { color: #2a7d2a; font-weight: 700; } .verdict-denied { color: #b00020; font-weight: 700; }

        """

    static let apiJS = """
        // The one small API client of the console: JSON in and out, the session's CSRF
        // token on every state-changing call, errors thrown with the server's message.
        // The Data, Rules and Triggers calls name the chosen namespace (`ns`; '' is the
        // default, sent without one); accounts, sessions and metrics are the server's.
        export class ConsoleAPI {
          constructor() {
            this.csrf = null;
            this.namespace = '';
            this.picking = false;  // true when the server has namespaces besides the default
          }

          // `endpoint` in the chosen namespace.
          scoped(endpoint) {
            if (!this.namespace) return endpoint;
            return `${endpoint}${endpoint.includes('?') ? '&' : '?'}ns=${encodeURIComponent(this.namespace)}`;
          }

          // A screen's title, naming the namespace when there is a choice.
          titled(text) {
            return this.picking ? `${text} — ${this.namespace || '(default)'}` : text;
          }

          namespaces() { return this.request('GET', 'namespaces'); }

          async request(method, endpoint, body) {
            const headers = {};
            if (body !== undefined) headers['Content-Type'] = 'application/json';
            if (method !== 'GET' && this.csrf) headers['X-CSRF-Token'] = this.csrf;
            const response = await fetch(`api/${endpoint}`, {
              method, headers, credentials: 'same-origin',
              body: body === undefined ? undefined : JSON.stringify(body),
            });
            const data = await response.json().catch(() => ({}));
            if (response.status === 401 && endpoint !== 'session') this.onSignedOut?.();
            if (!response.ok) {
              const error = new Error(data.error || (data.errors ? 'the rules do not compile' : `HTTP ${response.status}`));
              error.status = response.status;
              error.data = data;
              throw error;
            }
            return data;
          }

          async session() {
            const session = await this.request('GET', 'session');
            this.csrf = session.csrf;
            return session;
          }

          async signIn(email, password) {
            const session = await this.request('POST', 'session', { email, password });
            this.csrf = session.csrf;
            return session;
          }

          async signOut() {
            await this.request('DELETE', 'session');
            this.csrf = null;
          }

          // The chosen namespace's REST API as an administrator: `path` is "/" or "/a/b".
          restEndpoint(path, query = '') {
            const location = path === '/' ? '/' : path.split('/').map(encodeURIComponent).join('/');
            return this.scoped(`rest${location}.json${query}`);
          }

          restURL(path, query = '') { return `api/${this.restEndpoint(path, query)}`; }

          shallow(path) {
            return this.request('GET', this.restEndpoint(path, '?shallow=true'));
          }

          set(path, value) {
            return this.request('PUT', this.restEndpoint(path), value);
          }

          remove(path) {
            return this.request('DELETE', this.restEndpoint(path));
          }

          rules() { return this.request('GET', this.scoped('rules')); }
          checkRules(text) { return this.request('POST', 'rules/check', { text }); }
          saveRules(text) { return this.request('PUT', this.scoped('rules'), { text }); }
          rulesHistory() { return this.request('GET', this.scoped('rules/history')); }
          simulate(question) { return this.request('POST', this.scoped('rules/simulate'), question); }
          users(query, after) {
            const parameters = new URLSearchParams();
            if (query) parameters.set('q', query);
            if (after) parameters.set('after', after);
            return this.request('GET', `users?${parameters}`);
          }
          user(uid) { return this.request('GET', `users/${encodeURIComponent(uid)}`); }
          async metrics() {
            const response = await fetch('api/metrics', { credentials: 'same-origin' });
            if (!response.ok) throw new Error(`metrics: HTTP ${response.status}`);
            return response.text();
          }
          userAction(uid, action) { return this.request('POST', `users/${encodeURIComponent(uid)}/${action}`, {}); }
          deleteUser(uid) { return this.request('DELETE', `users/${encodeURIComponent(uid)}`); }
          setClaims(uid, claims) { return this.request('PUT', `users/${encodeURIComponent(uid)}/claims`, { claims }); }
          triggers() { return this.request('GET', this.scoped('triggers')); }
          resendDeadLetters(ids) { return this.request('POST', this.scoped('triggers/resend'), { ids }); }
          parkEvents(ids) { return this.request('POST', this.scoped('triggers/park'), { ids }); }
          profile(action, duration) {
            return this.request('POST', this.scoped(`profile?action=${action}` + (duration ? `&duration=${duration}` : '')));
          }

          // Live changes under `path` (server-sent events, the session's cookie).
          watch(path, onChange) {
            const source = new EventSource(this.restURL(path));
            source.addEventListener('put', onChange);
            source.addEventListener('patch', onChange);
            return source;
          }
        }

        """

    static let signInJS = """
        // The sign-in screen: a labelled form; errors go to the alert region.
        export function renderSignIn(main, { onSubmit }) {
          main.replaceChildren();
          const form = document.createElement('form');
          form.className = 'signin';
          form.setAttribute('aria-label', 'Sign in');
          const field = (label, type, name, autocomplete) => {
            const wrapper = document.createElement('label');
            wrapper.textContent = label;
            const input = document.createElement('input');
            Object.assign(input, { type, name, autocomplete, required: true });
            wrapper.append(input);
            form.append(wrapper);
            return input;
          };
          const email = field('Email', 'email', 'email', 'username');
          const password = field('Password', 'password', 'password', 'current-password');
          const submit = document.createElement('button');
          submit.type = 'submit';
          submit.textContent = 'Sign in';
          form.append(submit);
          form.addEventListener('submit', async (event) => {
            event.preventDefault();
            submit.disabled = true;
            try {
              await onSubmit(email.value, password.value);
            } finally {
              submit.disabled = false;
            }
          });
          main.append(form);
          email.focus();
        }

        """

    static let appJS = """
        // The console's shell: signs in, then shows the screens; one module per screen.
        import { ConsoleAPI } from './api.js';
        import { renderSignIn } from './signin.js';
        import { DataScreen } from './data.js';
        import { RulesScreen } from './rules.js';
        import { UsersScreen } from './users.js';
        import { TriggersScreen } from './triggers.js';
        import { ProfileScreen } from './profile.js';
        import { HealthScreen } from './health.js';

        const api = new ConsoleAPI();
        const main = document.getElementById('main');
        const alertRegion = document.getElementById('alert');
        const who = document.getElementById('who');
        const signOutButton = document.getElementById('sign-out');

        // After a session ended elsewhere, the screen's own failed request is not news: the
        // notice stays until the next sign-in.
        const SESSION_ENDED = 'Your session has ended; sign in again.';
        let sessionEnded = false;

        function announce(message) {
          if (sessionEnded && message !== SESSION_ENDED) return;
          alertRegion.textContent = message || '';
        }

        function showSignedOut() {
          who.textContent = '';
          signOutButton.hidden = true;
          nav.hidden = true;
          picker.hidden = true;
          renderSignIn(main, {
            onSubmit: async (email, password) => {
              sessionEnded = false;
              try {
                const session = await api.signIn(email, password);
                announce('');
                showSignedIn(session);
              } catch (error) {
                announce(error.message);
              }
            },
          });
        }

        let screen = null;
        let shown = null;
        const nav = document.getElementById('nav');
        const screens = { data: DataScreen, rules: RulesScreen, users: UsersScreen, triggers: TriggersScreen, profile: ProfileScreen, health: HealthScreen };
        // The screens that show one namespace's database (the others are the server's).
        const perNamespace = new Set(['data', 'rules', 'triggers', 'profile']);
        const picker = document.getElementById('namespace-picker');
        const namespaceSelect = document.getElementById('namespace');

        // The namespace picker: shown only when the server has more than the default.
        async function loadNamespaces() {
          let list = [];
          try {
            list = (await api.namespaces()).namespaces;
          } catch (error) {
            announce(error.message);
          }
          api.picking = list.length > 1;
          if (!list.some((entry) => entry.name === api.namespace)) api.namespace = '';
          namespaceSelect.replaceChildren(...list.map((entry) => {
            const option = document.createElement('option');
            option.value = entry.name;
            option.textContent = entry.default ? '(default)' : entry.name;
            return option;
          }));
          namespaceSelect.value = api.namespace;
          picker.hidden = !api.picking;
        }

        // Another namespace: the screen showing a database shows the chosen one's.
        namespaceSelect.addEventListener('change', () => {
          api.namespace = namespaceSelect.value;
          if (perNamespace.has(shown)) show(shown);
        });

        function show(name) {
          screen?.close();
          shown = name;
          announce('');
          for (const button of nav.querySelectorAll('button')) {
            if (button.dataset.screen === name) button.setAttribute('aria-current', 'page');
            else button.removeAttribute('aria-current');
          }
          screen = new screens[name](main, api, announce);
          screen.open();
        }

        nav.addEventListener('click', (event) => {
          const name = event.target.dataset?.screen;
          if (name) show(name);
        });

        async function showSignedIn(session) {
          who.textContent = session.email;
          signOutButton.hidden = false;
          nav.hidden = false;
          await loadNamespaces();
          if (nav.hidden) return;  // signed out meanwhile
          show('data');  // the Data screen first
        }

        // A session that ended elsewhere (expired, the password changed, signed out in
        // another tab): back to the sign-in form, saying so.
        api.onSignedOut = () => {
          screen?.close();
          screen = null;
          showSignedOut();
          sessionEnded = true;
          announce(SESSION_ENDED);
        };

        signOutButton.addEventListener('click', async () => {
          screen?.close();
          screen = null;
          try {
            await api.signOut();
          } catch (error) {
            announce(error.message);
          }
          showSignedOut();
        });

        api.session().then(showSignedIn, showSignedOut);

        """

    static let dataJS = """
        // The Data screen: the tree, read lazily (shallow reads), leaf values shown, the
        // node last opened watched live (server-sent events); add, edit (JSON checked
        // before sending) and delete (confirmed).
        const join = (path, key) => (path === '/' ? '' : path) + '/' + key;
        // Deleting a node with more children than this asks first.
        const CONFIRM_CHILDREN = 3;
        // Open nodes watched live at once (one connection each).
        const MAX_WATCHED = 3;
        const label = (path) => (path === '/' ? '/' : path.slice(path.lastIndexOf('/') + 1));
        // Keys and values are shown in <bdi> elements and quoted in text between U+2068 and
        // U+2069 (first-strong isolate ... pop): their own direction controls stay inside.

        export class DataScreen {
          constructor(main, api, announce) {
            this.main = main;
            this.api = api;
            this.announce = announce;
            this.expanded = new Set(['/']);
            this.watched = new Map();
            this.generations = new WeakMap();
          }

          open() {
            this.main.replaceChildren();
            const heading = document.createElement('h2');
            heading.id = 'data-title';
            heading.textContent = this.api.titled('Data');
            this.tree = document.createElement('ul');
            this.tree.className = 'tree';
            this.tree.setAttribute('role', 'tree');
            this.tree.setAttribute('aria-labelledby', 'data-title');
            this.main.append(heading, this.tree);
            const root = this.nodeItem('/');
            this.tree.append(root);
            this.expand(root, '/');
          }

          close() {
            for (const source of this.watched.values()) source.close();
            this.watched.clear();
          }

          nodeItem(path) {
            const item = document.createElement('li');
            item.setAttribute('role', 'treeitem');
            item.dataset.path = path;
            const toggle = document.createElement('button');
            toggle.type = 'button';
            toggle.className = 'toggle';
            toggle.setAttribute('aria-label', `Expand ${label(path)}`);
            toggle.textContent = '▸';
            const key = document.createElement('bdi');
            key.className = 'key';
            key.textContent = label(path);
            item.append(toggle, ' ', key);
            if (path !== '/') item.append(this.deleteButton(path));
            toggle.addEventListener('click', () => {
              if (this.expanded.has(path)) this.collapse(item, path);
              else this.expand(item, path);
            });
            item.setAttribute('aria-expanded', 'false');
            return item;
          }

          leafItem(path, value) {
            const item = document.createElement('li');
            item.setAttribute('role', 'treeitem');
            item.dataset.path = path;
            const key = document.createElement('bdi');
            key.className = 'key';
            key.textContent = label(path);
            const shown = document.createElement('bdi');
            shown.className = 'value';
            shown.textContent = JSON.stringify(value);
            const edit = document.createElement('button');
            edit.type = 'button';
            edit.textContent = 'Edit';
            edit.setAttribute('aria-label', `Edit ${label(path)}`);
            edit.addEventListener('click', () => this.editLeaf(item, path, value));
            item.append(key, ': ', shown, edit, this.deleteButton(path));
            return item;
          }

          deleteButton(path) {
            const button = document.createElement('button');
            button.type = 'button';
            button.textContent = 'Delete';
            button.setAttribute('aria-label', `Delete ${label(path)}`);
            button.addEventListener('click', async () => {
              // A leaf or a small node goes at once; a node with more than
              // CONFIRM_CHILDREN children is deleted only after a confirmation.
              let children = 0;
              try {
                const shallow = await this.api.shallow(path);
                if (shallow && typeof shallow === 'object') children = Object.keys(shallow).length;
              } catch (error) {
                return this.announce(error.message);
              }
              if (children > CONFIRM_CHILDREN && !window.confirm(`Delete \\u2068${path}\\u2069 and its ${children} children?`)) return;
              await this.attempt(() => this.api.remove(path));
              await this.refresh(path.slice(0, path.lastIndexOf('/')) || '/');
            });
            return button;
          }

          editLeaf(item, path, value) {
            const form = document.createElement('form');
            form.className = 'add';
            const input = document.createElement('input');
            input.value = JSON.stringify(value);
            input.setAttribute('aria-label', `New value of ${label(path)} (JSON)`);
            const save = document.createElement('button');
            save.type = 'submit';
            save.textContent = 'Save';
            // Live changes leave an open form alone, so it closes here: Cancel (or Escape)
            // sends nothing and draws the leaf again, as Save does with the value it wrote;
            // the parent's read after it shows the value the server has now.
            const cancel = document.createElement('button');
            cancel.type = 'button';
            cancel.textContent = 'Cancel';
            cancel.setAttribute('aria-label', `Cancel the edit of ${label(path)}`);
            const parent = path.slice(0, path.lastIndexOf('/')) || '/';
            const close = (shown) => {
              if (item.isConnected) item.replaceWith(this.leafItem(path, shown));
              return this.refresh(parent);
            };
            cancel.addEventListener('click', () => close(value));
            input.addEventListener('keydown', (event) => {
              if (event.key === 'Escape') close(value);
            });
            form.append(input, save, cancel);
            form.addEventListener('submit', async (event) => {
              event.preventDefault();
              const parsed = this.parse(input.value);
              if (parsed === undefined) return;
              // Saved: the leaf is drawn again with its value (an open form keeps it as it is).
              if (await this.attempt(() => this.api.set(path, parsed))) await close(parsed);
            });
            item.replaceChildren(form);
            input.focus();
          }

          addForm(path) {
            const form = document.createElement('form');
            form.className = 'add';
            const key = document.createElement('input');
            key.setAttribute('aria-label', `New key under ${label(path)}`);
            key.placeholder = 'key';
            const value = document.createElement('input');
            value.setAttribute('aria-label', `Value of the new key under ${label(path)} (JSON)`);
            value.placeholder = 'JSON value';
            const add = document.createElement('button');
            add.type = 'submit';
            add.textContent = 'Add';
            form.append(key, value, add);
            form.addEventListener('submit', async (event) => {
              event.preventDefault();
              if (!key.value || /[.#$\\[\\]\\/]/.test(key.value)) {
                this.announce('A key may not be empty or contain . # $ [ ] /');
                return;
              }
              const parsed = this.parse(value.value);
              if (parsed === undefined) return;
              if (await this.attempt(() => this.api.set(join(path, key.value), parsed))) {
                // The form is kept across redraws: emptied once its child is written.
                key.value = '';
                value.value = '';
                await this.refresh(path);
              }
            });
            return form;
          }

          // Export (a download of the subtree's JSON) and import (a JSON file replaces the
          // subtree), each with a progress bar.
          transfer(path) {
            const box = document.createElement('div');
            box.className = 'transfer';
            const progress = document.createElement('progress');
            progress.max = 1;
            progress.value = 0;
            progress.hidden = true;
            progress.setAttribute('aria-label', `Transfer of ${label(path)}`);
            const exportButton = document.createElement('button');
            exportButton.type = 'button';
            exportButton.textContent = 'Export JSON';
            exportButton.setAttribute('aria-label', `Export ${label(path)} as JSON`);
            exportButton.addEventListener('click', () => this.exportJSON(path, progress));
            const file = document.createElement('input');
            file.type = 'file';
            file.accept = 'application/json,.json';
            file.setAttribute('aria-label', `Import JSON into ${label(path)}`);
            file.addEventListener('change', () => file.files[0] && this.importJSON(path, file.files[0], progress));
            box.append(exportButton, ' ', file, ' ', progress);
            return box;
          }

          async exportJSON(path, progress) {
            progress.hidden = false;
            progress.value = 0;
            try {
              const response = await fetch(this.api.restURL(path), { credentials: 'same-origin' });
              if (!response.ok) throw new Error(`export: HTTP ${response.status}`);
              const total = Number(response.headers.get('Content-Length')) || 0;
              const reader = response.body.getReader();
              const chunks = [];
              let received = 0;
              for (;;) {
                const { done, value } = await reader.read();
                if (done) break;
                chunks.push(value);
                received += value.length;
                if (total) progress.value = received / total;
              }
              progress.value = 1;
              const link = document.createElement('a');
              link.href = URL.createObjectURL(new Blob(chunks, { type: 'application/json' }));
              link.download = `${path === '/' ? 'root' : path.slice(1).replaceAll('/', '-')}.json`;
              link.click();
              URL.revokeObjectURL(link.href);
              this.announce('');
            } catch (error) {
              this.announce(error.message);
            }
          }

          importJSON(path, file, progress) {
            const reader = new FileReader();
            progress.hidden = false;
            progress.value = 0;
            reader.onprogress = (event) => { if (event.lengthComputable) progress.value = event.loaded / event.total / 2; };
            reader.onload = () => {
              try {
                JSON.parse(reader.result);
              } catch (error) {
                return this.announce(`Not valid JSON: ${error.message}`);
              }
              // XMLHttpRequest: fetch tells nothing of an upload's progress.
              const request = new XMLHttpRequest();
              request.open('PUT', this.api.restURL(path));
              request.setRequestHeader('Content-Type', 'application/json');
              request.setRequestHeader('X-CSRF-Token', this.api.csrf);
              request.upload.onprogress = (event) => { if (event.lengthComputable) progress.value = 0.5 + event.loaded / event.total / 2; };
              request.onload = async () => {
                if (request.status !== 200) {
                  let message = `import: HTTP ${request.status}`;
                  try { message = JSON.parse(request.responseText).error || message; } catch {}
                  return this.announce(message);
                }
                progress.value = 1;
                this.announce('');
                await this.refresh(path);
              };
              request.onerror = () => this.announce('import: the connection failed');
              request.send(reader.result);
            };
            reader.readAsText(file);
          }

          parse(text) {
            try {
              return JSON.parse(text);
            } catch (error) {
              this.announce(`Not valid JSON: ${error.message}`);
              return undefined;
            }
          }

          async attempt(action) {
            try {
              await action();
              this.announce('');
              return true;
            } catch (error) {
              this.announce(error.message);
              return false;
            }
          }

          itemFor(path) {
            return [...this.tree.querySelectorAll('li[role="treeitem"]')].find((item) => item.dataset.path === path);
          }

          async expand(item, path) {
            this.expanded.add(path);
            item.setAttribute('aria-expanded', 'true');
            item.querySelector('.toggle').textContent = '▾';
            await this.renderChildren(item, path);
            this.watch(path);
          }

          collapse(item, path) {
            this.expanded.delete(path);
            this.unwatch(path);
            this.generations.set(item, (this.generations.get(item) || 0) + 1);  // a render under way is dropped
            item.setAttribute('aria-expanded', 'false');
            item.querySelector('.toggle').textContent = '▸';
            item.querySelector(':scope > ul')?.remove();
            item.querySelector(':scope > form.add')?.remove();
            item.querySelector(':scope > .transfer')?.remove();
          }

          async refresh(path) {
            const item = this.itemFor(path);
            if (item && this.expanded.has(path)) await this.renderChildren(item, path);
          }

          async renderChildren(item, path) {
            // Changes can arrive while a render waits for the server: only the newest
            // render of an item is shown.
            const generation = (this.generations.get(item) || 0) + 1;
            this.generations.set(item, generation);
            let children;
            try {
              children = await this.api.shallow(path);
            } catch (error) {
              this.announce(error.message);
              return;
            }
            // `shallow` answers `true` for every child; a child's own shallow read is its
            // value when it is a leaf, an object of `true`s when it has children.
            const keys = children && typeof children === 'object' ? Object.keys(children).sort((a, b) => a.localeCompare(b)) : [];
            const values = await Promise.all(keys.map((key) => this.api.shallow(join(path, key)).catch(() => null)));
            if (this.generations.get(item) !== generation) return;
            // Moving a kept element (into the new group) takes the focus from a field in it:
            // given back at the end, with the caret where it was.
            const focused = item.contains(document.activeElement) ? document.activeElement : null;
            const caret = focused instanceof HTMLInputElement && typeof focused.selectionStart === 'number'
              ? [focused.selectionStart, focused.selectionEnd] : null;
            const group = document.createElement('ul');
            group.setAttribute('role', 'group');
            // Child nodes already shown keep their element (and what is open under them):
            // a change above them does not redraw, close or re-read what is below. So does
            // a leaf whose edit form is open: what the user is typing there is theirs until
            // they save it.
            const shown = new Map([...item.querySelectorAll(':scope > ul > li')].map((li) => [li.dataset.path, li]));
            keys.forEach((key, index) => {
              const childPath = join(path, key);
              const value = values[index];
              const existing = shown.get(childPath);
              if (value !== null && typeof value === 'object') {
                if (existing?.querySelector(':scope > .toggle')) {
                  group.append(existing);
                  return;
                }
                const child = this.nodeItem(childPath);
                group.append(child);
                if (this.expanded.has(childPath)) this.expand(child, childPath);
              } else if (existing && !existing.querySelector(':scope > .toggle') && existing.querySelector(':scope > form')) {
                group.append(existing);
              } else {
                group.append(this.leafItem(childPath, value));
              }
            });
            item.querySelector(':scope > ul')?.remove();
            // The node's add form and its export and import stay as they are (what is typed
            // in them, a transfer under way); the new children go before them.
            const form = item.querySelector(':scope > form.add');
            if (form) form.before(group);
            else item.append(group, this.addForm(path), this.transfer(path));
            if (focused?.isConnected && document.activeElement !== focused) {
              focused.focus();
              if (caret) focused.setSelectionRange(caret[0], caret[1]);
            } else if (focused && !focused.isConnected) {
              // A leaf's Edit or Delete had it, and the leaf was drawn again: the same
              // button of the new leaf takes it (keyboard users stay where they were).
              const leaf = focused.closest('li[data-path]')?.dataset.path;
              const name = focused.getAttribute('aria-label');
              const again = leaf && name && [...group.querySelectorAll(':scope > li[data-path]')]
                .find((li) => li.dataset.path === leaf)
                ?.querySelector(`:scope > button[aria-label="${CSS.escape(name)}"]`);
              again?.focus();
            }
          }

          // The open nodes are watched live, the MAX_WATCHED opened last (each stream is a
          // connection, and a browser keeps six per server for everything).
          watch(path) {
            this.unwatch(path);
            let first = true;
            this.watched.set(path, this.api.watch(path, () => {
              if (first) { first = false; return; }  // the snapshot: already shown
              this.refresh(path);
            }));
            while (this.watched.size > MAX_WATCHED) this.unwatch(this.watched.keys().next().value);
          }

          unwatch(path) {
            this.watched.get(path)?.close();
            this.watched.delete(path);
          }
        }

        """

    static let rulesJS = """
        // The Rules screen: the rules file, highlighted; compile errors with line and
        // column before saving; save; the last versions with a diff and restore; and the
        // simulator, which shows every rule evaluated and the one that decided.
        const element = (tag, props = {}, ...children) => {
          const node = Object.assign(document.createElement(tag), props);
          node.append(...children);
          return node;
        };

        const labelled = (text, control) => element('label', {}, text, control);

        // Tokens of a rules file (JSON with comments and rule expressions in strings).
        function highlight(text) {
          const out = [];
          const pattern = /(\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?\\*\\/)|("(?:[^"\\\\]|\\\\.)*")(\\s*:)?|(-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)|\\b(true|false|null)\\b/g;
          let last = 0;
          for (const match of text.matchAll(pattern)) {
            out.push(document.createTextNode(text.slice(last, match.index)));
            const [whole, comment, string, colon, number, literal] = match;
            if (comment) out.push(element('span', { className: 'tok-comment', textContent: comment }));
            else if (string) {
              out.push(element('span', { className: colon ? 'tok-key' : 'tok-string', textContent: string }));
              if (colon) out.push(document.createTextNode(colon));
            } else if (number) out.push(element('span', { className: 'tok-number', textContent: number }));
            else if (literal) out.push(element('span', { className: 'tok-literal', textContent: literal }));
            last = match.index + whole.length;
          }
          out.push(document.createTextNode(text.slice(last)));
          return out;
        }

        // A line diff (longest common subsequence): [[' ' | '+' | '-', line]].
        function diff(before, after) {
          const a = before.split('\\n'), b = after.split('\\n');
          const table = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
          for (let i = a.length - 1; i >= 0; i--) {
            for (let j = b.length - 1; j >= 0; j--) {
              table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
            }
          }
          const lines = [];
          let i = 0, j = 0;
          while (i < a.length && j < b.length) {
            if (a[i] === b[j]) { lines.push([' ', a[i]]); i++; j++; }
            else if (table[i + 1][j] >= table[i][j + 1]) { lines.push(['-', a[i]]); i++; }
            else { lines.push(['+', b[j]]); j++; }
          }
          while (i < a.length) lines.push(['-', a[i++]]);
          while (j < b.length) lines.push(['+', b[j++]]);
          return lines;
        }

        export class RulesScreen {
          constructor(main, api, announce) {
            this.main = main;
            this.api = api;
            this.announce = announce;
          }

          close() {}

          async open() {
            this.main.replaceChildren();
            this.text = element('textarea', { id: 'rules-text', spellcheck: false });
            this.preview = element('pre', { className: 'highlight' });
            this.preview.setAttribute('aria-hidden', 'true');
            this.status = element('p', { id: 'rules-status' });
            this.status.setAttribute('role', 'status');
            const check = element('button', { type: 'button', textContent: 'Check' });
            const save = element('button', { type: 'button', textContent: 'Save' });
            check.addEventListener('click', () => this.check());
            save.addEventListener('click', () => this.save(this.text.value));
            this.text.addEventListener('input', () => this.preview.replaceChildren(...highlight(this.text.value)));
            this.history = element('ol', { className: 'history' });
            this.diffView = element('pre', { className: 'diff' });
            this.main.append(
              element('h2', { textContent: this.api.titled('Rules') }),
              element('div', { className: 'rules-editor' }, labelled('Rules file', this.text), this.preview,
                      element('div', {}, check, ' ', save), this.status),
              element('h3', { textContent: 'History' }), this.history, this.diffView,
              element('h3', { textContent: 'Simulator' }), this.simulatorForm());
            try {
              this.text.value = (await this.api.rules()).text;
              this.preview.replaceChildren(...highlight(this.text.value));
            } catch (error) {
              this.announce(error.message);
            }
            this.loadHistory();
          }

          describe(errors) {
            return errors.map((e) => `Line ${e.line}, column ${e.column}: ${e.message}${e.rule ? ` (${e.rule})` : ''}`).join('\\n');
          }

          async check() {
            try {
              const { errors } = await this.api.checkRules(this.text.value);
              if (errors.length) { this.announce(this.describe(errors)); this.status.textContent = ''; }
              else { this.announce(''); this.status.textContent = 'The rules compile.'; }
            } catch (error) {
              this.announce(error.message);
            }
          }

          async save(text) {
            this.status.textContent = '';
            try {
              const { errors } = await this.api.checkRules(text);
              if (errors.length) return this.announce(this.describe(errors));
              await this.api.saveRules(text);
              this.text.value = text;
              this.preview.replaceChildren(...highlight(text));
              this.announce('');
              this.status.textContent = 'Saved.';
              this.loadHistory();
            } catch (error) {
              this.announce(error.data?.errors ? this.describe(error.data.errors) : error.message);
            }
          }

          async loadHistory() {
            let versions = [];
            try {
              versions = await this.api.rulesHistory();
            } catch (error) {
              return this.announce(error.message);
            }
            this.history.replaceChildren(...versions.map((version) => {
              const when = new Date(version.savedAt).toISOString().replace('T', ' ').slice(0, 19);
              const show = element('button', { type: 'button', textContent: 'Diff' });
              show.setAttribute('aria-label', `Diff of the version saved ${when}`);
              show.addEventListener('click', () => {
                this.diffView.replaceChildren(...diff(version.text, this.text.value).map(([mark, line]) =>
                  element('div', { className: mark === '+' ? 'diff-add' : mark === '-' ? 'diff-remove' : '', textContent: `${mark} ${line}` })));
              });
              const restore = element('button', { type: 'button', textContent: 'Restore' });
              restore.setAttribute('aria-label', `Restore the version saved ${when}`);
              restore.addEventListener('click', () => this.save(version.text));
              return element('li', {}, `${when} UTC by `, element('bdi', { textContent: version.savedBy }), ' ', show, ' ', restore);
            }));
          }

          simulatorForm() {
            const operation = element('select', { id: 'sim-operation' });
            for (const name of ['read', 'set', 'update']) operation.append(element('option', { value: name, textContent: name }));
            const path = element('input', { id: 'sim-path', value: '/' });
            const who = element('select', { id: 'sim-auth' });
            who.append(element('option', { value: 'out', textContent: 'signed out' }), element('option', { value: 'in', textContent: 'a user' }));
            const uid = element('input', { id: 'sim-uid' });
            const provider = element('input', { id: 'sim-provider', value: 'password' });
            const claims = element('input', { id: 'sim-claims', value: '{}' });
            const value = element('input', { id: 'sim-value', value: 'null' });
            const run = element('button', { type: 'submit', textContent: 'Simulate' });
            this.result = element('div', { id: 'sim-result' });
            this.result.setAttribute('aria-live', 'polite');
            const form = element('form', { className: 'simulator' },
              element('label', { htmlFor: 'sim-operation', textContent: 'Operation' }), operation,
              element('label', { htmlFor: 'sim-path', textContent: 'Path' }), path,
              element('label', { htmlFor: 'sim-auth', textContent: 'Signed in as' }), who,
              element('label', { htmlFor: 'sim-uid', textContent: 'uid' }), uid,
              element('label', { htmlFor: 'sim-provider', textContent: 'Provider' }), provider,
              element('label', { htmlFor: 'sim-claims', textContent: 'Custom claims (JSON)' }), claims,
              element('label', { htmlFor: 'sim-value', textContent: 'Value (JSON)' }), value,
              run);
            form.addEventListener('submit', async (event) => {
              event.preventDefault();
              let parsedClaims, parsedValue;
              try {
                parsedClaims = JSON.parse(claims.value || '{}');
                parsedValue = JSON.parse(value.value || 'null');
              } catch (error) {
                return this.announce(`Not valid JSON: ${error.message}`);
              }
              const auth = who.value === 'in' ? { uid: uid.value, provider: provider.value, claims: parsedClaims } : null;
              try {
                const answer = await this.api.simulate({ operation: operation.value, path: path.value, auth, value: parsedValue });
                this.announce('');
                const verdict = element('p', { className: answer.allowed ? 'verdict-allowed' : 'verdict-denied',
                                               textContent: answer.allowed ? 'Allowed' : 'Denied' });
                this.result.replaceChildren(verdict, element('ol', { className: 'trace' },
                  ...answer.trace.map((line) => element('li', { textContent: line }))));
              } catch (error) {
                this.announce(error.message);
              }
            });
            return element('div', {}, form, this.result);
          }
        }

        """

    static let usersJS = """
        // The Users screen: search by email or uid, a paged list, one user's details and
        // what an administrator can do to the account.
        const element = (tag, props = {}, ...children) => {
          const node = Object.assign(document.createElement(tag), props);
          node.append(...children);
          return node;
        };
        const when = (ms) => (ms ? new Date(Number(ms)).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '–');

        export class UsersScreen {
          constructor(main, api, announce) {
            this.main = main;
            this.api = api;
            this.announce = announce;
          }

          close() {}

          open() {
            this.main.replaceChildren();
            const query = element('input', { id: 'user-query', type: 'search' });
            const search = element('form', { className: 'add' },
              element('label', { htmlFor: 'user-query', textContent: 'Search by email or uid' }), query,
              element('button', { type: 'submit', textContent: 'Search' }));
            search.addEventListener('submit', (event) => {
              event.preventDefault();
              this.list(query.value.trim(), null);
            });
            this.table = element('table', { className: 'users' });
            this.more = element('button', { type: 'button', textContent: 'Next page', hidden: true });
            this.details = element('section', { id: 'user-details' });
            this.details.setAttribute('aria-live', 'polite');
            this.main.append(element('h2', { textContent: 'Users' }), search, this.table, this.more, this.details);
            this.list('', null);
          }

          async list(query, after) {
            const asked = (this.asked = (this.asked || 0) + 1);
            let page;
            try {
              page = await this.api.users(query, after);
            } catch (error) {
              return this.announce(error.message);
            }
            if (asked !== this.asked) return;  // a newer search is under way
            this.announce(query && page.users.length === 0 ? `No user ${query}` : '');
            const head = element('tr', {}, ...['Email', 'uid', 'Created', 'Last sign-in', 'Status'].map((t) => element('th', { textContent: t })));
            this.table.replaceChildren(head, ...page.users.map((user) => {
              const open = element('button', { type: 'button', textContent: user.email || user.localId });
              open.addEventListener('click', () => this.show(user.localId));
              return element('tr', { className: 'user-row' },
                element('td', {}, open), element('td', { textContent: user.localId }), element('td', { textContent: when(user.createdAt) }),
                element('td', { textContent: when(user.lastLoginAt) }), element('td', { textContent: user.disabled ? 'disabled' : 'active' }));
            }));
            this.more.hidden = !page.next;
            this.more.onclick = () => this.list(query, page.next);
          }

          async show(uid) {
            // The panel never shows one user with the buttons of another: another user's
            // details go at once, and a lookup that fails leaves no user at all.
            const asked = (this.shownAsked = (this.shownAsked || 0) + 1);
            if (this.shownUid !== uid) this.details.replaceChildren();
            this.shownUid = null;
            let user;
            try {
              user = await this.api.user(uid);
            } catch (error) {
              if (asked !== this.shownAsked) return;
              this.details.replaceChildren(element('p', {}, 'Could not open the user ', element('bdi', { textContent: uid }), `: ${error.message}`));
              return this.announce(error.message);
            }
            if (asked !== this.shownAsked) return;  // another user was asked for since
            this.shownUid = uid;
            const facts = [['uid', user.localId], ['Email', user.email || '–'], ['Email verified', user.emailVerified ? 'yes' : 'no'],
                           ['Provider', user.provider],
                           ['Linked providers', (user.providerUserInfo || []).filter((p) => p.providerId !== 'password')
                             .map((p) => `${p.providerId} (${p.rawId}${p.email ? ', ' + p.email : ''})`).join('; ') || '–'],
                           ['Created', when(user.createdAt)], ['Last sign-in', when(user.lastLoginAt)],
                           ['Status', user.disabled ? 'disabled' : 'active'], ['Custom claims', user.customAttributes || '{}']];
            const list = element('dl', { className: 'user' }, ...facts.flatMap(([k, v]) => [element('dt', { textContent: k }), element('dd', { textContent: v })]));
            const act = (label, run) => {
              const button = element('button', { type: 'button', textContent: label });
              button.addEventListener('click', async () => {
                try {
                  await run();
                  this.announce('');
                  await this.show(uid);
                } catch (error) {
                  this.announce(error.message);
                }
              });
              return button;
            };
            const claims = element('input', { id: 'user-claims', value: user.customAttributes || '{}' });
            const saveClaims = act('Save claims', async () => {
              let parsed;
              try { parsed = JSON.parse(claims.value); } catch (error) { throw new Error(`Not valid JSON: ${error.message}`); }
              await this.api.setClaims(uid, parsed);
            });
            const remove = element('button', { type: 'button', textContent: 'Delete user' });
            remove.addEventListener('click', async () => {
              if (!window.confirm(`Delete the user \\u2068${user.email || uid}\\u2069 and sign them out?`)) return;
              try {
                await this.api.deleteUser(uid);
                this.shownUid = null;
                this.details.replaceChildren(element('p', {}, 'Deleted ', element('bdi', { textContent: uid }), '.'));
                this.list('', null);
              } catch (error) {
                this.announce(error.message);
              }
            });
            this.details.replaceChildren(
              element('h3', { textContent: user.email || uid }), list,
              element('div', {},
                act(user.disabled ? 'Enable' : 'Disable', () => this.api.userAction(uid, user.disabled ? 'enable' : 'disable')), ' ',
                act('Revoke sessions', () => this.api.userAction(uid, 'revoke')), ' ',
                act('Send password reset', () => this.api.userAction(uid, 'reset')), ' ', remove),
              element('form', { className: 'add' }, element('label', { htmlFor: 'user-claims', textContent: 'Custom claims (JSON)' }), claims, saveClaims));
          }
        }

        """

    static let healthJS = """
        // The Health screen: requests/s, open connections and streams, commit latency and
        // the database's size, read every 2 s from the counters of /metrics, each with a
        // small chart of the last two minutes.
        const INTERVAL_MS = 2000;
        const KEEP = 60;

        // Prometheus text → { name: total over its labels }, histograms' _sum and _count too.
        function parse(text) {
          const totals = {};
          for (const line of text.split('\\n')) {
            if (!line || line.startsWith('#')) continue;
            const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})?\\s+(\\S+)/);
            if (!match) continue;
            const value = Number(match[3]);
            if (Number.isFinite(value)) totals[match[1]] = (totals[match[1]] || 0) + value;
          }
          return totals;
        }

        const SERIES = [
          { id: 'requests', title: 'Requests/s', unit: '/s', from: (now, before, seconds) =>
              before ? Math.max(0, (now.hearth_http_requests_total || 0) - (before.hearth_http_requests_total || 0)) / seconds : null },
          { id: 'connections', title: 'Open connections', unit: '', from: (now) => now.hearth_open_connections ?? 0 },
          { id: 'streams', title: 'Open streams', unit: '', from: (now) => now.hearth_open_streams ?? 0 },
          { id: 'commit', title: 'Commit latency', unit: ' ms', from: (now, before) => {
              if (!before) return null;
              const commits = (now.hearth_commit_duration_seconds_count || 0) - (before.hearth_commit_duration_seconds_count || 0);
              const seconds = (now.hearth_commit_duration_seconds_sum || 0) - (before.hearth_commit_duration_seconds_sum || 0);
              return commits > 0 ? (seconds / commits) * 1000 : null;
            } },
          { id: 'database', title: 'Database size', unit: ' MiB', from: (now) => (now.hearth_database_bytes || 0) / 1048576 },
        ];

        export class HealthScreen {
          constructor(main, api, announce) {
            this.main = main;
            this.api = api;
            this.announce = announce;
            this.history = Object.fromEntries(SERIES.map((s) => [s.id, []]));
            this.previous = null;
            this.timer = null;
          }

          open() {
            this.main.replaceChildren();
            const heading = document.createElement('h2');
            heading.textContent = 'Health';
            this.grid = document.createElement('div');
            this.grid.className = 'charts';
            this.cards = {};
            for (const series of SERIES) {
              const card = document.createElement('section');
              card.className = 'chart';
              card.id = `chart-${series.id}`;
              const title = document.createElement('h3');
              title.textContent = series.title;
              const now = document.createElement('div');
              now.className = 'now';
              now.textContent = '–';
              const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
              svg.setAttribute('viewBox', `0 0 ${KEEP} 30`);
              svg.setAttribute('preserveAspectRatio', 'none');
              svg.setAttribute('role', 'img');
              svg.setAttribute('aria-label', `${series.title}, last two minutes`);
              const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
              line.setAttribute('fill', 'none');
              line.setAttribute('stroke', '#2d6cb5');
              line.setAttribute('stroke-width', '1');
              line.setAttribute('vector-effect', 'non-scaling-stroke');
              svg.append(line);
              card.append(title, now, svg);
              this.grid.append(card);
              this.cards[series.id] = { now, line };
            }
            this.main.append(heading, this.grid);
            this.sample();
            this.timer = setInterval(() => this.sample(), INTERVAL_MS);
          }

          close() {
            clearInterval(this.timer);
            this.timer = null;
          }

          async sample() {
            let totals;
            try {
              totals = parse(await this.api.metrics());
            } catch (error) {
              return this.announce(error.message);
            }
            const at = Date.now();
            const seconds = this.previous ? (at - this.previous.at) / 1000 : 0;
            for (const series of SERIES) {
              const value = series.from(totals, this.previous?.totals, seconds);
              const points = this.history[series.id];
              if (value !== null) {
                points.push(value);
                if (points.length > KEEP) points.shift();
                const digits = Number.isInteger(value) || value >= 100 ? 0 : value >= 10 ? 1 : 2;
                this.cards[series.id].now.textContent = `${value.toFixed(digits)}${series.unit}`;
              }
              const top = Math.max(...points, 1e-9);
              this.cards[series.id].line.setAttribute('points',
                points.map((v, i) => `${i + KEEP - points.length},${(30 - (v / top) * 28 - 1).toFixed(2)}`).join(' '));
            }
            this.previous = { at, totals };
          }
        }

        """
}
