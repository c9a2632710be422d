"""The console's namespace picker in a real browser (Debian's chromium through
chromium-driver, selenium). Used by ConsoleBrowserTests.thePickerShowsTheChosenNamespace.

Arguments: SINGLE_URL MULTI_URL EMAIL PASSWORD PROFILE_DIR. SINGLE_URL is a server with the
default namespace only, {"motd": "hello"}; MULTI_URL one with a namespaces file listing
`env-b`: the default holds {"motd": "hello"}, env-b {"motd": "from b", "onlyb": 1} and
its rules file has `"marker-b": {".read": false}`. The administrator EMAIL/PASSWORD exists
on both.

Prints one JSON line per check {"name", "ok", "details"}, then `done`.
"""
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_support import chromium, outcome, wait_for

SINGLE, MULTI, EMAIL, PASSWORD, PROFILE = sys.argv[1:6]


def leaf(driver, path):
    """The JSON text the Data screen shows for the leaf at `path`, or None."""
    return driver.execute_script(
        "const row = [...document.querySelectorAll('li[data-path]')].find((li) => li.dataset.path === arguments[0]);"
        "const shown = row && row.querySelector(':scope > .value'); return shown ? shown.textContent : null;", path)


def heading(driver):
    found = driver.find_elements(By.CSS_SELECTOR, 'main h2')
    return found[0].text if found else None


def signed_in(driver, base):
    driver.get(base + '/console/')
    wait_for(driver, lambda d: d.find_elements(By.XPATH, "//button[normalize-space(text())='Sign in']"), 'the sign-in form')
    driver.find_element(By.XPATH, "//label[normalize-space(text())='Email']/input").send_keys(EMAIL)
    driver.find_element(By.XPATH, "//label[normalize-space(text())='Password']/input").send_keys(PASSWORD)
    driver.find_element(By.XPATH, "//button[normalize-space(text())='Sign in']").click()
    wait_for(driver, lambda d: leaf(d, '/motd') == '"hello"', 'the Data screen')


def main():
    driver = chromium(PROFILE)
    picker = lambda: driver.find_element(By.ID, 'namespace-picker')  # noqa: E731
    choose = lambda label: Select(driver.find_element(By.ID, 'namespace')).select_by_visible_text(label)  # noqa: E731
    rules_text = lambda: driver.find_element(By.ID, 'rules-text').get_property('value')  # noqa: E731
    try:
        def single_has_no_picker():
            signed_in(driver, SINGLE)
            return not picker().is_displayed() and heading(driver) == 'Data', heading(driver)
        outcome('single_namespace_has_no_picker', single_has_no_picker)

        def picker_lists_namespaces():
            signed_in(driver, MULTI)
            wait_for(driver, lambda d: picker().is_displayed(), 'the picker')
            options = [o.text for o in Select(driver.find_element(By.ID, 'namespace')).options]
            return options == ['(default)', 'env-b'] and heading(driver) == 'Data — (default)', (options, heading(driver))
        outcome('picker_lists_namespaces_default_first', picker_lists_namespaces)

        def data_of_env_b():
            choose('env-b')
            wait_for(driver, lambda d: leaf(d, '/motd') == '"from b"', "env-b's motd")
            wait_for(driver, lambda d: leaf(d, '/onlyb') == '1', "env-b's own key")
            return heading(driver) == 'Data — env-b', heading(driver)
        outcome('picking_env_b_shows_its_data', data_of_env_b)

        def rules_of_env_b():
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Rules']").click()
            wait_for(driver, lambda d: 'marker-b' in rules_text(), "env-b's rules")
            wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, 'ol.history li'), "env-b's rules history")
            return heading(driver) == 'Rules — env-b', heading(driver)
        outcome('rules_screen_shows_env_b_rules', rules_of_env_b)

        def back_to_default():
            choose('(default)')
            wait_for(driver, lambda d: rules_text() and 'marker-b' not in rules_text(), "the default's rules")
            driver.find_element(By.XPATH, "//nav//button[normalize-space(text())='Data']").click()
            wait_for(driver, lambda d: leaf(d, '/motd') == '"hello"', "the default's motd")
            return leaf(driver, '/onlyb') is None and heading(driver) == 'Data — (default)', heading(driver)
        outcome('back_to_the_default', back_to_default)
    finally:
        driver.quit()


if __name__ == '__main__':
    main()
    print('done', flush=True)
