"""The console's Profile screen in a real browser (Debian's chromium through
chromium-driver, selenium). Used by ConsoleProfileBrowserTests.

Arguments: URL EMAIL PASSWORD ADMIN_TOKEN PROFILE_DIR. The server's rules give
`/cities/$city` its own rules node and `/cities` no `.indexOn`; {"motd": "hello"} is stored;
the administrator EMAIL/PASSWORD exists.

Prints one JSON line per check {"name", "ok", "details"}, then `done`.
"""
import sys
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By

from browser_support import WAIT, chromium, outcome, wait_for

BASE, EMAIL, PASSWORD, ADMIN, PROFILE = sys.argv[1:6]


def http(method, path, body=None, token=None):
    """One request to the server: its status."""
    request = urllib.request.Request(BASE + path, method=method, data=None if body is None else body.encode())
    if token:
        request.add_header('Authorization', 'Bearer ' + token)
    try:
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def rows(driver, table):
    """The cells of `table.<table>`'s rows, header excluded."""
    return driver.execute_script(
        "const t = document.querySelector('table.' + arguments[0]); if (!t) return null;"
        "return [...t.querySelectorAll('tr')].slice(1).map((tr) => [...tr.children].map((td) => td.textContent));", table)


def main():
    driver = chromium(PROFILE)
    status = lambda: driver.find_element(By.ID, 'profile-status').text  # noqa: E731
    alert = lambda: driver.find_element(By.CSS_SELECTOR, '[role="alert"]').text  # noqa: E731
    button = lambda label: driver.find_element(By.XPATH, f"//main//button[normalize-space(text())='{label}']")  # noqa: E731
    try:
        def screen_opens():
            driver.get(BASE + '/console/')
            wait_for(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign in']"), 'the sign-in form')
            driver.find_element(By.XPATH, "//label[normalize-space(text())='Email']/input").send_keys(EMAIL)
            driver.find_element(By.XPATH, "//label[normalize-space(text())='Password']/input").send_keys(PASSWORD)
            driver.find_element(By.XPATH, "//button[normalize-space(text())='Sign in']").click()
            wait_for(driver, lambda d: d.find_elements(By.XPATH, "//nav//button[normalize-space(text())='Profile']"), 'the nav')
            wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'li[data-path]'), 'the Data screen')
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Profile']").click()
            wait_for(driver, lambda d: d.find_elements(By.ID, 'profile-duration'), 'the Profile screen')
            return driver.find_element(By.CSS_SELECTOR, 'main h2').text == 'Profile', driver.find_element(By.CSS_SELECTOR, 'main h2').text
        outcome('profile_screen_opens', screen_opens)

        def window_records():
            field = driver.find_element(By.ID, 'profile-duration')
            field.clear()
            field.send_keys('600')
            button('Start').click()
            wait_for(driver, lambda d: status().startswith('Recording for 600 s'), 'the recording status')
            statuses = [http('PUT', f'/cities/{city}.json', '{"name": "x"}') for city in ('oslo', 'rome')]
            statuses.append(http('GET', '/cities.json?orderBy=%22name%22&limitToFirst=1'))
            return statuses == [200, 200, 400], statuses
        outcome('window_records_while_requests_run', window_records)

        def tables_after_stop():
            button('Stop now').click()
            wait_for(driver, lambda d: rows(d, 'profile-speed'), 'the speed table')
            speed = rows(driver, 'profile-speed')
            unindexed = rows(driver, 'profile-unindexed')
            ok = (['write', '/cities/$city', '2'] in [row[:3] for row in speed]
                  and ['read', '/cities', '1'] in [row[:3] for row in speed]
                  and unindexed == [['/cities', 'name', '1']]
                  and status().startswith('Recorded'))
            return ok, {'speed': speed, 'unindexed': unindexed, 'status': status()}
        outcome('report_tables_after_stop', tables_after_stop)

        def second_window_refused():
            started = http('POST', '/.profile?action=start&duration=600', token=ADMIN)
            button('Start').click()
            wait_for(driver, lambda d: 'already recording' in alert(), 'the refusal')
            stopped = http('POST', '/.profile?action=stop', token=ADMIN)
            return started == 200 and stopped == 200, (started, alert(), stopped)
        outcome('a_second_window_is_refused_clearly', second_window_refused)
    finally:
        driver.quit()


if __name__ == '__main__':
    main()
    print('done', flush=True)
