"""The rules coverage page (/.inspect/coverage) in a real browser: Debian's chromium through
chromium-driver, driven with selenium (PyPI). Used by
Tests/EndToEndTests/CoverageEndToEndTests.swift after coverage_client.py's `suite`.

Arguments: BASE_URL NAMESPACE PROFILE_DIR SCREENSHOT_PATH.
Prints one JSON line per check {"name", "ok", "details"}, then `done`.
"""
import json
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE, NAMESPACE, PROFILE, SCREENSHOT = sys.argv[1:5]
WAIT = 20


def check(name, body):
    """Runs one check (a function answering (ok, details)) and prints its line."""
    line = {'name': name, 'ok': False}
    try:
        ok, line['details'] = body()
        line['ok'] = bool(ok)
    except Exception as error:  # pylint: disable=broad-except
        line['details'] = f'{type(error).__name__}: {error}'
    print(json.dumps(line, default=str), flush=True)


def main():
    options = Options()
    options.binary_location = '/usr/bin/chromium'
    for argument in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', f'--user-data-dir={PROFILE}',
                     '--window-size=1000,560'):
        options.add_argument(argument)
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    driver = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=options)
    try:
        driver.get(f'{BASE}/.inspect/coverage?ns={NAMESPACE}')
        WebDriverWait(driver, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, 'pre.rules span.cov'))

        def span(text, rule):
            for element in driver.find_elements(By.CSS_SELECTOR, 'span.cov'):
                title = element.get_attribute('title')
                if element.text == text and title.startswith(rule + ' '):
                    return element
            raise AssertionError(f'no span {text!r} of {rule}')

        def background(element):
            return element.value_of_css_property('background-color')

        def coloured():
            never = span("auth.token.admin === true", "/rules/admin/.read")
            some = span("newData.hasChildren(['name'])", "/rules/users/$uid/.validate")
            both = span("auth.uid == $uid", "/rules/users/$uid/.write")
            classes = [e.get_attribute('class') for e in (never, some, both)]
            colours = [background(e) for e in (never, some, both)]
            ok = classes == ['cov cov-none', 'cov cov-partial', 'cov cov-full'] and len(set(colours)) == 3 \
                and 'rgba(0, 0, 0, 0)' not in colours
            return ok, {'classes': classes, 'colours': colours}

        def hover():
            denied = span("auth.uid == $uid", "/rules/users/$uid/.write")
            leaf = denied.find_element(By.XPATH, "./span[normalize-space(text())='$uid']")
            ActionChains(driver).move_to_element(leaf).perform()
            titles = [denied.get_attribute('title'), leaf.get_attribute('title')]
            # Only the innermost expression under the mouse is outlined.
            outlines = [denied.value_of_css_property('outline-style'), leaf.value_of_css_property('outline-style')]
            expected = ['/rules/users/$uid/.write — evaluated 2 times: true 1, false 1',
                        '/rules/users/$uid/.write — evaluated 2 times: string 2']
            return titles == expected and outlines == ['none', 'solid'], {'titles': titles, 'outlines': outlines}

        def summary():
            text = driver.find_element(By.ID, 'summary').text
            return text == '19 of 24 expressions evaluated (79.2 %)', text

        def no_policy_violations():
            logs = [entry['message'] for entry in driver.get_log('browser')]
            return not any('Content Security Policy' in message or 'Refused' in message for message in logs), logs

        check('spans_coloured_by_coverage', coloured)
        check('hover_shows_counts', hover)
        check('summary_percent', summary)
        check('no_policy_violations', no_policy_violations)
        # The mouse off the rules, so the screenshot shows no hover outline.
        ActionChains(driver).move_to_element(driver.find_element(By.TAG_NAME, 'h1')).perform()
        check('screenshot', lambda: (driver.save_screenshot(SCREENSHOT), SCREENSHOT))
    finally:
        driver.quit()
    print('done', flush=True)


if __name__ == '__main__':
    main()
