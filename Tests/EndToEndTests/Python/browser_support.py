"""What the console's browser drivers share: headless Chromium (Debian's chromium through
chromium-driver, selenium), one JSON line per check, and bounded waits."""
import json

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 20


def chromium(profile):
    """A headless Chromium with its own profile directory."""
    options = Options()
    options.binary_location = '/usr/bin/chromium'
    for argument in ('--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', f'--user-data-dir={profile}'):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=options)


def outcome(name, run):
    """Runs the check `run` (returning (ok, details)) and prints its line {"name", "ok", "details"}."""
    try:
        ok, details = run()
    except Exception as error:  # pylint: disable=broad-except
        ok, details = False, f'{type(error).__name__}: {error}'
    print(json.dumps({'name': name, 'ok': bool(ok), 'details': details}, default=str), flush=True)


def wait_for(driver, condition, what):
    """`condition` true within WAIT seconds, or an AssertionError naming `what`."""
    try:
        return WebDriverWait(driver, WAIT).until(condition)
    except TimeoutException:
        raise AssertionError(f'timed out waiting for {what}')
