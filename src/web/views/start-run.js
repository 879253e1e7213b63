// Starting a run from the browser: a project (existing or new), the framework, the app and test
// files (uploaded first, with progress), the device group; then the run's own page.

import { api, uploadFile } from '../api.js';
import { field, h, statusLine } from '../dom.js';
import { current, page } from '../page.js';
/** @import { ApiDeviceGroup, ApiFramework, ApiList, ApiProject, ApiTestRun, TestRunConfig } from '../../client/api-types.ts' */

const NEW_PROJECT = 'new';

/** @param {string} [projectId] the project to preselect */
export async function startRunView(projectId) {
  const shown = page(
    'Start a run',
    h('section', {}, h('h1', {}, 'Start a run'), h('p', { class: 'muted' }, 'Loading…')),
  );
  /** @type {[ApiList<ApiProject>, ApiList<ApiFramework>, ApiList<ApiDeviceGroup>]} */
  const [projects, frameworks, groups] = await Promise.all([
    api('GET', '/api/me/projects?limit=0&sort=createTime_d&embedRuns=0'),
    api('GET', '/api/me/available-frameworks'),
    api('GET', '/api/me/device-groups?withPublic=true&limit=0&sort=displayName_a'),
  ]);
  if (shown !== current()) return;
  const usable = frameworks.data.filter((framework) => framework.canRunFromUI && framework.available !== false);
  const status = statusLine();
  const progress = h('progress', { max: 1, value: 0, hidden: true, 'aria-label': 'Upload progress' });

  const projectSelect = h(
    'select',
    { name: 'project', id: 'run-project' },
    projects.data.map((project) =>
      h('option', { value: project.id, selected: String(project.id) === String(projectId) }, project.name),
    ),
    h('option', { value: NEW_PROJECT, selected: projects.data.length === 0 }, 'New project…'),
  );
  const projectName = h('input', { name: 'projectName', id: 'run-project-name', autocomplete: 'off', maxlength: 255 });
  const projectNameField = field('New project name', projectName);

  const frameworkSelect = h(
    'select',
    { name: 'framework', id: 'run-framework' },
    ['ANDROID', 'IOS'].map((os) =>
      h(
        'optgroup',
        { label: os === 'IOS' ? 'iOS' : 'Android' },
        usable
          .filter((framework) => framework.osType === os)
          .map((framework) => h('option', { value: framework.id }, framework.name)),
      ),
    ),
  );
  const frameworkField = field('Framework', frameworkSelect, ' ');
  const frameworkHelp = /** @type {HTMLElement} */ (frameworkField.querySelector('.help'));
  const appInput = h('input', { type: 'file', name: 'app', id: 'run-app' });
  const appField = field('App', appInput);
  const testsInput = h('input', { type: 'file', name: 'tests', id: 'run-tests' });
  const testsField = field('Test package', testsInput);
  const groupSelect = h('select', { name: 'group', id: 'run-group', required: true });
  const runName = h('input', { name: 'testRunName', id: 'run-name', maxlength: 255, placeholder: 'Test Run N' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Start run');

  const selectedFramework = () => usable.find((framework) => String(framework.id) === frameworkSelect.value);

  /** Shows the files and groups the chosen framework needs, and nothing it does not. */
  function fit() {
    const framework = selectedFramework();
    if (!framework) return;
    frameworkHelp.textContent = framework.description ?? '';
    /**
     * @param {HTMLInputElement} input
     * @param {HTMLElement} wrapper
     * @param {string[]} extensions
     * @param {string} what
     */
    const needs = (input, wrapper, extensions, what) => {
      wrapper.hidden = extensions.length === 0;
      input.required = extensions.length > 0;
      input.accept = extensions.map((extension) => `.${extension}`).join(',');
      /** @type {HTMLLabelElement} */ (wrapper.querySelector('label')).textContent =
        extensions.length > 0 ? `${what} (${extensions.map((extension) => `.${extension}`).join(' or ')})` : what;
    };
    // Extensions come joined by commas ("apk", "" when no file is needed).
    const extensions = (/** @type {string} */ joined) => joined.split(',').filter((extension) => extension !== '');
    needs(appInput, appField, extensions(framework.requiredAppExtensions ?? ''), 'App');
    needs(testsInput, testsField, extensions(framework.requiredTestExtensions ?? ''), 'Test package');
    const previous = groupSelect.value;
    const fitting = groups.data.filter((group) => group.osType === framework.osType);
    groupSelect.replaceChildren(
      ...fitting.map((group) =>
        h(
          'option',
          { value: group.id, selected: String(group.id) === previous },
          `${group.displayName} (${group.deviceCount} device${group.deviceCount === 1 ? '' : 's'})`,
        ),
      ),
    );
    groupSelect.disabled = fitting.length === 0;
  }

  function fitProject() {
    const isNew = projectSelect.value === NEW_PROJECT;
    projectNameField.hidden = !isNew;
    projectName.required = isNew;
  }

  frameworkSelect.addEventListener('change', fit);
  projectSelect.addEventListener('change', fitProject);

  const form = h(
    'form',
    {
      class: 'stack wide',
      'aria-label': 'Start a run',
      onsubmit: async (/** @type {Event} */ event) => {
        event.preventDefault();
        const framework = /** @type {ApiFramework} */ (selectedFramework());
        submit.disabled = true;
        try {
          /** @type {TestRunConfig['files']} */
          const files = [];
          /** @type {Array<[HTMLInputElement, 'INSTALL' | 'RUN_TEST', string]>} */
          const inputs = [
            [appInput, 'INSTALL', 'app'],
            [testsInput, 'RUN_TEST', 'test package'],
          ];
          for (const [input, action, what] of inputs) {
            const file = /** @type {HTMLElement} */ (input.closest('.field')).hidden ? undefined : input.files?.[0];
            if (!file) continue;
            progress.hidden = false;
            progress.value = 0;
            status.ok(`Uploading the ${what} (${file.name})…`);
            const uploaded = await uploadFile(file, (fraction) => (progress.value = fraction));
            files.push({ id: uploaded.id, action });
          }
          progress.hidden = true;
          status.ok('Starting the run…');
          const isNew = projectSelect.value === NEW_PROJECT;
          /** @type {ApiTestRun} */
          const run = await api(
            'POST',
            '/api/me/runs',
            /** @satisfies {TestRunConfig} */ ({
              osType: framework.osType,
              frameworkId: framework.id,
              ...(isNew ? { projectName: projectName.value } : { projectId: Number(projectSelect.value) }),
              deviceGroupId: Number(groupSelect.value),
              files,
              ...(runName.value.trim() === '' ? {} : { testRunName: runName.value }),
            }),
          );
          location.hash = `#/projects/${run.projectId}/runs/${run.id}`;
        } catch (error) {
          progress.hidden = true;
          status.fail(error);
        } finally {
          submit.disabled = false;
        }
      },
    },
    field('Project', projectSelect),
    projectNameField,
    frameworkField,
    appField,
    testsField,
    field('Device group', groupSelect),
    field('Run name (optional)', runName),
    h('div', { class: 'row' }, submit, progress),
    status.element,
  );

  fit();
  fitProject();
  page('Start a run', h('section', {}, h('h1', {}, 'Start a run'), form));
}
