/// The admin console's files, compiled into the binary (issue 16: no CDN, no build step at
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
          <nav id="nav" aria-label="Screens" hidden></nav>
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
        header { display: flex; align-items: center; gap: 1rem; padding: 0.5rem 1rem; background: #2d2a26; color: #fff; }
        header h1 { font-size: 1.1rem; margin: 0; }
        header nav { display: flex; gap: 0.5rem; flex: 1; }
        header nav a { color: #fff; }
        #who { margin-left: auto; }
        main { padding: 1rem; max-width: 60rem; }
        #alert:not(:empty) { margin: 1rem; padding: 0.5rem 1rem; border: 1px solid #b00020; color: #b00020; background: #fff0f0; }
        form.signin { display: grid; gap: 0.5rem; max-width: 20rem; }
        label { display: grid; gap: 0.25rem; }
        input, button, textarea { font: inherit; padding: 0.3rem 0.5rem; }
        button:focus-visible, a:focus-visible, input:focus-visible { outline: 3px solid #e8a33d; }

        """

    static let apiJS = """
        // The one small API client of the console: JSON in and out, the session's CSRF
        // token on every state-changing call, errors thrown with the server's message.
        export class ConsoleAPI {
          constructor() {
            this.csrf = null;
          }

          async request(method, endpoint, body) {
            const headers = {};
            if (body !== undefined) headers['Content-Type'] = 'application/json';
            if (method !== 'GET' && this.csrf) headers['X-CSRF-Token'] = this.csrf;
            const response = await fetch(`api/${endpoint}`, {
              method, headers, credentials: 'same-origin',
              body: body === undefined ? undefined : JSON.stringify(body),
            });
            const data = await response.json().catch(() => ({}));
            if (!response.ok) {
              const error = new Error(data.error || `HTTP ${response.status}`);
              error.status = response.status;
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

        const api = new ConsoleAPI();
        const main = document.getElementById('main');
        const alertRegion = document.getElementById('alert');
        const who = document.getElementById('who');
        const signOutButton = document.getElementById('sign-out');

        function announce(message) {
          alertRegion.textContent = message || '';
        }

        function showSignedOut() {
          who.textContent = '';
          signOutButton.hidden = true;
          renderSignIn(main, {
            onSubmit: async (email, password) => {
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

        function showSignedIn(session) {
          who.textContent = session.email;
          signOutButton.hidden = false;
          main.replaceChildren();
          const heading = document.createElement('h2');
          heading.textContent = 'Signed in';
          main.append(heading);
        }

        signOutButton.addEventListener('click', async () => {
          try {
            await api.signOut();
          } catch (error) {
            announce(error.message);
          }
          showSignedOut();
        });

        api.session().then(showSignedIn, showSignedOut);

        """
}
