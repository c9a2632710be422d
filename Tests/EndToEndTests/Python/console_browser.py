"""The admin console in a real browser: Debian's chromium through chromium-driver, driven
with selenium (PyPI). Used by Tests/EndToEndTests/ConsoleBrowserTests.swift.

Arguments: BASE_URL EMAIL PASSWORD ADMIN_TOKEN PROFILE_DIR USER_TOKEN (an ID token of the
app user ann@example.com). The data is seeded by the Swift
test: {"motd": "hello", "cities": {"oslo": {"name": "Oslo", "temp": 3}},
"bidi": {RLO_KEY: RLO_VALUE, LONG_KEY: 1}}.

A trigger `motd_written` on /motd (retry false) whose receiver answered 500 to the seed's
event: one dead letter. A trigger `motd_parked` on /motd (retried) whose receiver port
nobody listens on: its event stays pending, the oldest, until parked. CONSOLE_TRIGGER_SECRETS: its header value and HMAC secret
(comma-separated), which the page must never show.

Prints one JSON line per check {"name", "ok", "details"}, then `done`.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

BASE, EMAIL, PASSWORD, ADMIN, PROFILE, USER_TOKEN = sys.argv[1:7]
WAIT = 20
# A key and a value holding U+202E RIGHT-TO-LEFT OVERRIDE, and a key far wider than the page.
RLO_KEY, RLO_VALUE, LONG_KEY = 'k\u202eey', 'va\u202elue', 'w' * 400
DOWNLOADS = os.path.join(PROFILE, 'downloads')
os.makedirs(DOWNLOADS, exist_ok=True)


def report(name, ok, details=None):
    print(json.dumps({'name': name, 'ok': bool(ok), 'details': details}, default=str), flush=True)


def rest(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f'{BASE}{path}.json?auth={ADMIN}', data=data, method=method)
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        return json.loads(response.read())


def accounts(operation, body):
    """The Admin API's accounts endpoint (`operation`: '', ':lookup', ':delete') as the admin."""
    request = urllib.request.Request(f'{BASE}/v1/projects/hearth/accounts{operation}', data=json.dumps(body).encode(), method='POST',
                                     headers={'Authorization': f'Bearer {ADMIN}', 'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        return json.loads(response.read())


def looked_up(uid):
    """The account of `uid` as the Admin API sees it, or None."""
    return (accounts(':lookup', {'localId': [uid]}).get('users') or [None])[0]


def stale(element):
    """True once `element` left the page (the panel was drawn again)."""
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True


def until(driver, condition, what):
    """Waits for `condition`; one that met an element the page has just drawn again
    (stale) is asked again, as the screens re-render on their own refresh."""
    try:
        return WebDriverWait(driver, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: condition(d))
    except TimeoutException:
        raise AssertionError(f'timed out waiting for {what}')


def click(driver, by, selector, what):
    """Finds the element and clicks it in one step, asked again (by `until`) when the page
    drew it anew between the two: the data tree re-renders on every live change."""
    def attempt(d):
        d.find_element(by, selector).click()
        return True
    until(driver, attempt, what)


def focus_on(driver, by, selector, what):
    """Gives the keyboard's focus to the element (as Tab would), found again (by `until`)
    when the page drew it anew in between; returns it."""
    def attempt(d):
        element = d.find_element(by, selector)
        d.execute_script('arguments[0].focus()', element)
        return element if d.execute_script('return document.activeElement === arguments[0]', element) else False
    return until(driver, attempt, what)


def fill_and_submit(driver, fields, opener=None):
    """Types each (CSS selector, text) of `fields` into a form of the data tree and submits
    it with that form's own button, found from the first field. The tree keeps an open
    form through live changes, so nothing here is asked again: a form drawn anew while it
    is filled in fails the step (stale), as it would lose a user's typing. `opener`, a CSS
    selector, is clicked first when the first field is not on the page (an edit form)."""
    if opener and not driver.find_elements(By.CSS_SELECTOR, fields[0][0]):
        click(driver, By.CSS_SELECTOR, opener, opener)
    boxes = []
    for selector, text in fields:
        box = driver.find_element(By.CSS_SELECTOR, selector)
        box.clear()
        box.send_keys(text)
        boxes.append(box)
    boxes[0].find_element(By.XPATH, './ancestor::form[1]//button[@type="submit"]').click()


def field(driver, label):
    return driver.find_element(By.XPATH, f"//label[normalize-space(text())='{label}']/input")


def item(driver, path):
    """The tree item of `path`, or None (looked up afresh: the tree re-renders)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('li[data-path]')].find((e) => e.dataset.path === arguments[0]) || null", path)


def value_of(driver, path):
    """The shown value of the leaf at `path` (its JSON text), or None."""
    return driver.execute_script(
        "const li = [...document.querySelectorAll('li[data-path]')].find((e) => e.dataset.path === arguments[0]);"
        "const span = li && li.querySelector(':scope > .value'); return span ? span.textContent : null;", path)


def alert_present(driver):
    try:
        driver.switch_to.alert.text
        return True
    except Exception:  # pylint: disable=broad-except
        return False


def check(name, body):
    try:
        ok, details = body()
    except Exception as error:  # pylint: disable=broad-except
        ok, details = False, f'{type(error).__name__}: {error}'
    report(name, ok, details)


def main():
    options = Options()
    options.binary_location = '/usr/bin/chromium'
    for argument in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', f'--user-data-dir={PROFILE}'):
        options.add_argument(argument)
    options.add_experimental_option('prefs', {'download.default_directory': DOWNLOADS, 'download.prompt_for_download': False})
    driver = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=options)
    driver.execute_cdp_cmd('Browser.setDownloadBehavior', {'behavior': 'allow', 'downloadPath': DOWNLOADS})
    alert = lambda: driver.find_element(By.CSS_SELECTOR, '[role="alert"]').text  # noqa: E731
    try:
        driver.get(BASE + '/console/')

        def sign_in_form():
            until(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign in']"), 'the sign-in form')
            return True, driver.title
        check('sign_in_form', sign_in_form)

        def wrong_password():
            field(driver, 'Email').send_keys(EMAIL)
            field(driver, 'Password').send_keys('not the password')
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Sign in']").click()
            until(driver, lambda d: alert(), 'an error in the alert region')
            return alert() == 'wrong email or password', alert()
        check('wrong_password_announced', wrong_password)

        def sign_in():
            password = field(driver, 'Password')
            password.clear()
            password.send_keys(PASSWORD)
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Sign in']").click()
            until(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign out' and not(@hidden)]"), 'Sign out')
            until(driver, lambda d: value_of(d, '/motd'), 'the Data screen with leaf values')
            heading = driver.find_element(By.TAG_NAME, 'h2').text
            return heading == 'Data' and value_of(driver, '/motd') == '"hello"', [heading, value_of(driver, '/motd')]
        check('sign_in_opens_data_with_leaf_values', sign_in)

        def browse():
            driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Expand cities"]').click()
            until(driver, lambda d: item(d, '/cities/oslo'), 'oslo under cities')
            driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Expand oslo"]').click()
            until(driver, lambda d: value_of(d, '/cities/oslo/temp'), 'the leaves of oslo')
            return value_of(driver, '/cities/oslo/name') == '"Oslo"' and value_of(driver, '/cities/oslo/temp') == '3', \
                [value_of(driver, '/cities/oslo/name'), value_of(driver, '/cities/oslo/temp')]
        check('browse_lazily', browse)

        def bidi_and_long_keys():
            # U+202E in a key and a value reorders nothing after them: key, value, Edit, Delete
            # stay left to right (a leaf's Delete asks nothing: it must be where it says).
            driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Expand bidi"]').click()
            until(driver, lambda d: value_of(d, '/bidi/' + RLO_KEY) and value_of(d, '/bidi/' + LONG_KEY), 'the leaves of bidi')
            measure = (
                "const li = [...document.querySelectorAll('li[data-path]')].find((e) => e.dataset.path === arguments[0]);"
                "const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; };"
                "return {key: box(li.querySelector(':scope > .key')), value: box(li.querySelector(':scope > .value')),"
                "        edit: box(li.querySelector(':scope > button[aria-label^=\"Edit\"]')),"
                "        del: box(li.querySelector(':scope > button[aria-label^=\"Delete\"]')),"
                "        main: box(document.getElementById('main')), key_text: li.querySelector(':scope > .key').textContent,"
                "        page: [document.documentElement.scrollWidth, document.documentElement.clientWidth]};")
            rlo = driver.execute_script(measure, '/bidi/' + RLO_KEY)
            in_order = (rlo['key'][1] <= rlo['value'][0] + 1 and rlo['value'][1] <= rlo['edit'][0] + 1
                        and rlo['edit'][1] <= rlo['del'][0] + 1 and rlo['edit'][2] == rlo['del'][2])
            # The long key wraps inside the panel, its whole text on the page; its buttons in view.
            long = driver.execute_script(measure, '/bidi/' + LONG_KEY)
            fits = (long['key'][1] <= long['main'][1] and long['del'][1] <= long['main'][1]
                    and long['page'][0] <= long['page'][1] and long['key_text'] == LONG_KEY and long['key'][3] - long['key'][2] > 2 * (rlo['key'][3] - rlo['key'][2]))
            return in_order and fits, {'rlo': rlo, 'long': {k: v for k, v in long.items() if k != 'key_text'}}
        check('bidi_isolated_and_long_keys_wrap', bidi_and_long_keys)

        def edit(text):
            fill_and_submit(driver, [('input[aria-label="New value of temp (JSON)"]', text)],
                            opener='button[aria-label="Edit temp"]')

        def invalid_json():
            edit('{bad')
            until(driver, lambda d: alert().startswith('Not valid JSON'), 'the JSON error')
            still = rest('GET', '/cities/oslo/temp')
            return still == 3, [alert(), still]
        check('invalid_json_is_refused_before_sending', invalid_json)

        def edit_value():
            edit('5')
            until(driver, lambda d: value_of(d, '/cities/oslo/temp') == '5', 'the edited value')
            seen = rest('GET', '/cities/oslo/temp')
            return seen == 5, seen
        check('edit_seen_through_rest', edit_value)

        def live():
            rest('PUT', '/cities/oslo/temp', 7)
            until(driver, lambda d: value_of(d, '/cities/oslo/temp') == '7', 'the REST write, live')
            rest('PUT', '/cities/oslo/wind', 4)
            until(driver, lambda d: value_of(d, '/cities/oslo/wind') == '4', 'a new child, live')
            return True, None
        check('rest_write_appears_without_reload', live)

        def typing_survives_live_changes():
            # Half a new key typed under oslo, and temp's edit form open with a value typed,
            # when another child of oslo changes: both forms stay as they are, with the focus.
            key_box = driver.find_element(By.CSS_SELECTOR, 'input[aria-label="New key under oslo"]')
            key_box.clear()
            key_box.send_keys('hal')
            click(driver, By.CSS_SELECTOR, 'button[aria-label="Edit temp"]', 'the edit button')
            edit_box = driver.find_element(By.CSS_SELECTOR, 'input[aria-label="New value of temp (JSON)"]')
            edit_box.clear()
            edit_box.send_keys('12')
            focused_before = driver.switch_to.active_element == edit_box
            rest('PUT', '/cities/oslo/gust', 9)
            until(driver, lambda d: value_of(d, '/cities/oslo/gust') == '9', 'a sibling, live')
            kept = (not stale(key_box) and not stale(edit_box) and key_box.get_attribute('value') == 'hal'
                    and edit_box.get_attribute('value') == '12')
            focused = kept and driver.switch_to.active_element == edit_box
            edit_box.send_keys('3')  # typing goes on where it was
            edit_box.find_element(By.XPATH, './ancestor::form[1]//button[@type="submit"]').click()
            until(driver, lambda d: value_of(d, '/cities/oslo/temp') == '123', 'the saved edit, its form closed')
            key_box.clear()
            saved = rest('GET', '/cities/oslo/temp')
            return kept and focused and saved == 123, {'kept': kept, 'focused': [focused_before, focused], 'saved': saved,
                                                       'active': driver.execute_script('return document.activeElement.outerHTML.slice(0, 200)')}
        check('typing_survives_live_changes', typing_survives_live_changes)

        def edit_cancelled():
            # An open edit closes without sending: by its Cancel button, then by Escape.
            shown = []
            for how in ('button', 'escape'):
                click(driver, By.CSS_SELECTOR, 'button[aria-label="Edit gust"]', 'the edit button')
                box = driver.find_element(By.CSS_SELECTOR, 'input[aria-label="New value of gust (JSON)"]')
                box.clear()
                box.send_keys('99')
                if how == 'button':
                    driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Cancel the edit of gust"]').click()
                else:
                    box.send_keys(Keys.ESCAPE)
                until(driver, lambda d: value_of(d, '/cities/oslo/gust') == '9', f'gust shown again ({how})')
                shown.append(value_of(driver, '/cities/oslo/gust'))
            stored = rest('GET', '/cities/oslo/gust')
            return stored == 9 and not driver.find_elements(By.CSS_SELECTOR, 'input[aria-label="New value of gust (JSON)"]'), \
                {'shown': shown, 'stored': stored}
        check('edit_cancelled', edit_cancelled)

        def leaf_button_keeps_focus():
            # A keyboard user on gust's Delete button when a sibling changes: gust is drawn
            # again, and the new leaf's Delete button has the focus.
            before = focus_on(driver, By.CSS_SELECTOR, 'button[aria-label="Delete gust"]', 'the focus on Delete gust')
            rest('PUT', '/cities/oslo/rain', 2)
            until(driver, lambda d: value_of(d, '/cities/oslo/rain') == '2', 'a sibling, live')
            label = driver.execute_script("return document.activeElement.getAttribute('aria-label') || document.activeElement.tagName")
            redrawn = stale(before)
            return label == 'Delete gust' and redrawn, {'focused': label, 'redrawn': redrawn}
        check('leaf_button_keeps_focus', leaf_button_keeps_focus)

        def add_and_delete():
            fill_and_submit(driver, [('input[aria-label="New key under oslo"]', 'note'),
                                     ('input[aria-label="Value of the new key under oslo (JSON)"]', '"windy"')])
            until(driver, lambda d: value_of(d, '/cities/oslo/note') == '"windy"', 'the added child')
            added = rest('GET', '/cities/oslo/note')
            click(driver, By.CSS_SELECTOR, 'button[aria-label="Delete note"]', 'the delete button')  # a leaf: no question
            until(driver, lambda d: item(d, '/cities/oslo/note') is None, 'the deleted child gone')
            return added == 'windy' and rest('GET', '/cities/oslo/note') is None, added
        check('add_and_delete', add_and_delete)

        def delete_large_node():
            rest('PUT', '/cities/oslo/bulk', {'a': 1, 'b': 2, 'c': 3, 'd': 4})
            until(driver, lambda d: item(d, '/cities/oslo/bulk'), 'the bulk node, live')
            click(driver, By.CSS_SELECTOR, 'button[aria-label="Delete bulk"]', 'a click on Delete bulk')
            until(driver, lambda d: alert_present(d), 'the confirmation')
            question = driver.switch_to.alert.text
            driver.switch_to.alert.dismiss()
            kept = rest('GET', '/cities/oslo/bulk')
            click(driver, By.CSS_SELECTOR, 'button[aria-label="Delete bulk"]', 'a click on Delete bulk')
            until(driver, lambda d: alert_present(d), 'the confirmation again')
            driver.switch_to.alert.accept()
            until(driver, lambda d: item(d, '/cities/oslo/bulk') is None, 'the bulk node gone')
            return '4 children' in question and kept is not None and rest('GET', '/cities/oslo/bulk') is None, question
        check('large_delete_is_confirmed', delete_large_node)

        def export_json():
            click(driver, By.CSS_SELECTOR, 'button[aria-label="Export oslo as JSON"]', 'a click on Export')
            target = os.path.join(DOWNLOADS, 'cities-oslo.json')
            until(driver, lambda d: os.path.exists(target) and os.path.getsize(target) > 0, 'the exported file')
            with open(target) as f:
                exported = json.load(f)
            return exported == rest('GET', '/cities/oslo'), exported
        check('export_json', export_json)

        broken = '{\n  "rules": {\n    ".read": "auth.uid ===",\n    ".write": false\n  }\n}\n'
        fixed = ('{\n  "rules": {\n    "users": { "$uid": { ".read": "auth != null && auth.uid === $uid" } },\n'
                 '    "cities": { ".read": true, ".write": false }\n  }\n}\n')

        def set_rules(text):
            driver.execute_script(
                "const t = document.getElementById('rules-text'); t.value = arguments[0];"
                "t.dispatchEvent(new Event('input'));", text)
            driver.find_element(By.XPATH, "//div[@class='rules-editor']//button[normalize-space(text())='Save']").click()

        def rules_screen():
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Rules']").click()
            until(driver, lambda d: '.read' in d.execute_script("return document.getElementById('rules-text')?.value || ''"), 'the rules file')
            highlighted = driver.find_elements(By.CSS_SELECTOR, 'pre.highlight .tok-key')
            return len(highlighted) > 0, len(highlighted)
        check('rules_shown_highlighted', rules_screen)

        def broken_rules():
            set_rules(broken)
            until(driver, lambda d: 'Line 3' in alert(), 'the compile error with its line')
            still = rest('GET', '/.settings/rules')
            return '"auth.uid ==="' not in json.dumps(still), alert()
        check('broken_rules_show_their_line_and_are_not_saved', broken_rules)

        def save_rules():
            set_rules(fixed)
            until(driver, lambda d: d.find_element(By.ID, 'rules-status').text == 'Saved.', 'Saved.')
            request = urllib.request.Request(f'{BASE}/.settings/rules.json?auth={ADMIN}')
            with urllib.request.urlopen(request, timeout=WAIT) as response:
                served = response.read().decode()
            # The file Hearth started with, then this save, newest first.
            until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, 'ol.history li')) == 2, 'the history entries')
            entries = [li.text for li in driver.find_elements(By.CSS_SELECTOR, 'ol.history li')]
            ok = f'by {EMAIL} ' in entries[0] and 'by rules file (read at startup) ' in entries[1]
            return served == fixed and ok, [served, entries]
        check('rules_saved_and_in_history', save_rules)

        def simulate(signed_in):
            driver.execute_script("document.getElementById('sim-path').value = '/users/alice';"
                                  "document.getElementById('sim-uid').value = 'alice';"
                                  f"document.getElementById('sim-auth').value = '{'in' if signed_in else 'out'}';")
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Simulate']").click()
            wanted = 'Allowed' if signed_in else 'Denied'
            until(driver, lambda d: d.find_element(By.ID, 'sim-result').text.startswith(wanted), wanted)
            return [li.text for li in driver.find_elements(By.CSS_SELECTOR, '#sim-result .trace li')]

        def simulator():
            denied = simulate(False)
            allowed = simulate(True)
            decided = any('/rules/users/$uid/.read' in line for line in allowed)
            return len(denied) > 0 and decided, {'denied': denied, 'allowed': allowed}
        check('simulator_with_trace', simulator)

        def search(text, wanted):
            box = driver.find_element(By.ID, 'user-query')
            box.clear()
            box.send_keys(text)
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Search']").click()
            rows = "return [...document.querySelectorAll('tr.user-row td:first-child button')].map((b) => b.textContent)"
            until(driver, lambda d: d.execute_script(rows) == [wanted], f'the row of {wanted}')  # read at once: the list re-renders

        def open_row(wanted):
            def attempt(d):
                try:
                    d.find_element(By.XPATH, f"//tr[@class='user-row']//button[normalize-space(text())='{wanted}']").click()
                    return True
                except Exception:  # pylint: disable=broad-except  (the list re-rendered under the click)
                    return False
            until(driver, attempt, f'a click on {wanted}')

        def users_screen():
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Users']").click()
            until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'tr.user-row'), 'the user list')
            search('ann@example.com', 'ann@example.com')
            open_row('ann@example.com')
            until(driver, lambda d: 'password' in d.find_element(By.ID, 'user-details').text, 'the details')
            details = driver.find_element(By.ID, 'user-details').text
            before = urllib.request.urlopen(f'{BASE}/cities.json?auth={USER_TOKEN}', timeout=WAIT).status
            return 'ann@example.com' in details and before == 200, [details, before]
        check('users_search_and_details', users_screen)

        def disable_user():
            driver.find_element(By.XPATH, "//section[@id='user-details']//button[normalize-space(text())='Disable']").click()
            until(driver, lambda d: 'disabled' in d.find_element(By.ID, 'user-details').text, 'the disabled status')
            try:
                urllib.request.urlopen(f'{BASE}/cities.json?auth={USER_TOKEN}', timeout=WAIT)
                status = 200
            except urllib.error.HTTPError as error:
                status = error.code
            return status == 401, status
        check('disabled_user_is_refused', disable_user)

        def claims_and_reset():
            box = driver.find_element(By.ID, 'user-claims')
            box.clear()
            box.send_keys('{"role":"editor"}')
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Save claims']").click()
            until(driver, lambda d: '{"role":"editor"}' in d.find_element(By.ID, 'user-details').text, 'the saved claims')
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Send password reset']").click()
            until(driver, lambda d: 'EMAIL_NOT_CONFIGURED' in alert(), 'no SMTP: a clear error')
            return True, alert()
        check('claims_and_reset_without_smtp', claims_and_reset)

        def failed_lookup():
            # ann's details are open, with their buttons. A user listed, then deleted behind the
            # console's back, cannot be opened: nothing of ann (nor a button) may stay.
            accounts('', {'localId': 'gone', 'email': 'gone@example.com'})
            before = driver.find_element(By.ID, 'user-details').text
            search('gone@example.com', 'gone@example.com')
            accounts(':delete', {'localId': 'gone'})
            open_row('gone@example.com')
            until(driver, lambda d: alert(), 'the failed lookup announced')
            details = driver.find_element(By.ID, 'user-details')
            buttons = [b.text for b in details.find_elements(By.TAG_NAME, 'button')]
            ok = 'ann@example.com' in before and 'ann@example.com' not in details.text and not buttons and 'gone' in details.text
            return ok, {'details': details.text, 'buttons': buttons, 'alert': alert()}
        check('failed_lookup_clears_the_panel', failed_lookup)

        def slash_uid():
            # A uid with '/' (as a custom token may carry): opened, disabled, enabled, revoked, deleted.
            accounts('', {'localId': 'team/ops', 'email': 'ops-team@example.com'})
            search('team/ops', 'ops-team@example.com')
            open_row('ops-team@example.com')
            panel = lambda: driver.find_element(By.ID, 'user-details')  # noqa: E731
            until(driver, lambda d: 'team/ops' in panel().text, 'the details of team/ops')
            seen = {}
            for action, wanted in (('Disable', True), ('Enable', False), ('Revoke sessions', False)):
                heading = panel().find_element(By.TAG_NAME, 'h3')
                panel().find_element(By.XPATH, f".//button[normalize-space(text())='{action}']").click()
                until(driver, lambda d: stale(heading), f'the panel drawn again after {action}')  # only after a success
                seen[action] = (looked_up('team/ops') or {}).get('disabled', False) == wanted
            panel().find_element(By.XPATH, ".//button[normalize-space(text())='Delete user']").click()
            until(driver, lambda d: alert_present(d), 'the confirmation')
            driver.switch_to.alert.accept()
            until(driver, lambda d: 'Deleted' in panel().text, 'the deletion')
            seen['deleted'] = looked_up('team/ops') is None and accounts(':lookup', {'email': ['ann@example.com']}).get('users') is not None
            return all(seen.values()) and not alert(), seen
        check('slash_uid_managed_from_the_console', slash_uid)

        def health():
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Health']").click()
            now = lambda chart: driver.find_element(By.CSS_SELECTOR, f'#chart-{chart} .now').text  # noqa: E731
            until(driver, lambda d: now('connections') not in ('', '–'), 'open connections')
            rest('PUT', '/cities/oslo/temp', 9)  # a commit between two samples
            until(driver, lambda d: now('requests').endswith('/s') and now('commit').endswith('ms'), 'requests/s and commit latency')
            points = driver.find_element(By.CSS_SELECTOR, '#chart-requests polyline').get_attribute('points')
            values = {chart: now(chart) for chart in ('requests', 'connections', 'streams', 'commit', 'database')}
            ok = float(values['connections']) >= 1 and values['database'].endswith('MiB') and float(values['database'].split()[0]) > 0 and bool(points)
            return ok, values
        check('health_charts_from_metrics', health)

        def triggers():
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Triggers']").click()
            secrets = [s for s in os.environ.get('CONSOLE_TRIGGER_SECRETS', '').split(',') if s]
            read = {}

            def read_and_resend(d):
                # Read and click in one try: the triggers table is redrawn on its refresh.
                if not d.find_elements(By.CSS_SELECTOR, 'tr.dead-row'):
                    return False
                rows = [[c.text for c in r.find_elements(By.TAG_NAME, 'td')] for r in d.find_elements(By.CSS_SELECTOR, 'tr.trigger-row')]
                read['listed'] = next((r for r in rows if r and r[0] == 'motd_written'), [])
                row = d.find_element(By.CSS_SELECTOR, 'tr.dead-row')
                read['cells'] = [c.text for c in row.find_elements(By.TAG_NAME, 'td')]
                read['hidden'] = bool(secrets) and all(secret not in d.page_source for secret in secrets)
                row.find_element(By.XPATH, ".//button[normalize-space(text())='Resend']").click()
                return True
            until(driver, read_and_resend, 'a dead letter, resent')
            listed, cells, hidden = read['listed'], read['cells'], read['hidden']
            until(driver, lambda d: alert().startswith('Resent 1'), 'the resend announced')
            until(driver, lambda d: 'None.' in d.find_element(By.ID, 'dead-letters').text, 'no dead letter left')
            ok = (listed[:3] == ['motd_written', 'written', '/motd'] and listed[3].endswith('/motd-receiver') and listed[6] == '1'
                  and listed[7].endswith(' / 64.0 MiB') and not listed[7].startswith('0 B')
                  and cells[1:3] == ['motd_written', '/motd'] and 'HTTP 500' in cells[3] and hidden)
            return ok, {'trigger': listed, 'dead': cells, 'secrets_hidden': hidden}
        check('triggers_dead_letter_resent', triggers)

        def park():
            def oldest(d):
                for row in d.find_elements(By.CSS_SELECTOR, 'tr.trigger-row'):
                    if row.find_element(By.TAG_NAME, 'td').text == 'motd_parked':
                        return row.find_element(By.CSS_SELECTOR, 'td.oldest')
                return None
            read = {}

            def read_and_park(d):
                # Read and click in one try: the triggers table is redrawn on its refresh,
                # so a cell found before may be gone by the next call.
                cell = oldest(d)
                if cell is None or 'connection refused' not in cell.text:
                    return False
                read['shown'] = cell.text
                cell.find_element(By.CSS_SELECTOR, 'button.park').click()
                return True
            until(driver, read_and_park, 'the failing oldest event, parked')
            shown = read['shown']
            until(driver, lambda d: alert().startswith('Parked event'), 'the park announced')
            until(driver, lambda d: 'parked by an operator' in d.find_element(By.ID, 'dead-letters').text, 'the parked dead letter')
            until(driver, lambda d: oldest(d) is not None and oldest(d).text == '–', 'no pending event left')
            ok = shown.startswith('#') and '/motd · 0 attempt(s) · connection refused' in shown
            return ok, {'oldest': shown}
        check('triggers_oldest_event_parked', park)

        def refresh_keeps_focus():
            # A keyboard user on the parked letter's "Resend all" button: the screen's
            # refresh redraws every button, and the focus comes back to the same one.
            focus_on(driver, By.XPATH, "//section[@id='dead-letters']//button[starts-with(normalize-space(text()), 'Resend all')]",
                     'the focus on Resend all')
            table = driver.find_element(By.CSS_SELECTOR, '#dead-letters table')
            until(driver, lambda d: stale(table), 'the next refresh of the dead letters')
            key = driver.execute_script('return document.activeElement.dataset.focusKey || document.activeElement.tagName')
            return key == 'resend-all', key
        check('triggers_refresh_keeps_the_focus', refresh_keeps_focus)

        def security():
            with urllib.request.urlopen(f'{BASE}/console/', timeout=WAIT) as response:
                headers = response.headers
            csp = headers.get('Content-Security-Policy', '')
            forged = driver.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "fetch('api/users/nobody/disable', {method: 'POST', credentials: 'same-origin'}).then((r) => done(r.status), () => done(-1));")
            ok = ("script-src 'self'" in csp and 'unsafe-inline' not in csp and headers.get('X-Frame-Options') == 'DENY'
                  and headers.get('X-Content-Type-Options') == 'nosniff' and forged == 403)
            return ok, {'csp': csp, 'forged_status': forged}
        check('security_headers_and_csrf_refusal', security)

        def import_json():
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Data']").click()
            until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'button[aria-label="Expand cities"]'), 'the Data screen')
            driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Expand cities"]').click()
            until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'input[aria-label="Import JSON into cities"]'), 'the import control')
            source = os.path.join(DOWNLOADS, 'import.json')
            with open(source, 'w') as f:
                json.dump({'bergen': {'name': 'Bergen', 'temp': 8}}, f)
            driver.find_element(By.CSS_SELECTOR, 'input[aria-label="Import JSON into cities"]').send_keys(source)
            until(driver, lambda d: item(d, '/cities/bergen'), 'the imported node')
            return rest('GET', '/cities') == {'bergen': {'name': 'Bergen', 'temp': 8}}, rest('GET', '/cities')
        check('import_json', import_json)

        def session_ended_elsewhere():
            cookies = {c['name']: c['value'] for c in driver.get_cookies()}
            cookie = f"hearth_console={cookies['hearth_console']}"
            with urllib.request.urlopen(urllib.request.Request(f'{BASE}/console/api/session', headers={'Cookie': cookie}), timeout=WAIT) as r:
                csrf = json.loads(r.read())['csrf']
            request = urllib.request.Request(f'{BASE}/console/api/session', method='DELETE', headers={'Cookie': cookie, 'X-CSRF-Token': csrf})
            urllib.request.urlopen(request, timeout=WAIT).read()
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Users']").click()
            until(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign in']"), 'the sign-in form after the session ended')
            said = alert()
            field(driver, 'Email').send_keys(EMAIL)
            field(driver, 'Password').send_keys(PASSWORD)
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Sign in']").click()
            until(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign out' and not(@hidden)]"), 'signed in again')
            return said == 'Your session has ended; sign in again.', said
        check('ended_session_returns_to_sign_in', session_ended_elsewhere)

        def sign_out():
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Sign out']").click()
            until(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign in']"), 'the sign-in form again')
            driver.get(BASE + '/console/')
            until(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign in']"), 'still signed out after a reload')
            return True, None
        check('sign_out', sign_out)
    finally:
        driver.quit()


def expiry():
    """Against a server with HEARTH_CONSOLE_IDLE_SECONDS=2: after sign-in the page stays
    unused for longer than that, and its next request sends it back to sign-in."""
    options = Options()
    options.binary_location = '/usr/bin/chromium'
    for argument in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', f'--user-data-dir={PROFILE}'):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=options)
    try:
        driver.get(BASE + '/console/')
        until(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign in']"), 'the sign-in form')
        field(driver, 'Email').send_keys(EMAIL)
        field(driver, 'Password').send_keys(PASSWORD)
        driver.find_element(By.XPATH, "//button[normalize-space(text())='Sign in']").click()
        until(driver, lambda d: value_of(d, '/motd'), 'the Data screen')
        # The thing under test is the passing of time: idle longer than the server allows.
        time.sleep(3)
        driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Users']").click()

        def expired():
            until(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign in']"), 'the sign-in form after expiry')
            text = driver.find_element(By.CSS_SELECTOR, '[role="alert"]').text
            return text == 'Your session has ended; sign in again.', text
        check('idle_session_expires', expired)
    finally:
        driver.quit()


if __name__ == '__main__':
    if os.environ.get('CONSOLE_MODE') == 'expiry':
        expiry()
    else:
        main()
    print('done', flush=True)
