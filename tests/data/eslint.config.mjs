// ESLint's recommended rules for the page's modules and the npm client (tests/test_eslint.py
// runs it; the packages come from the npm registry, beside this file's copy).
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: "module", globals: { ...globals.browser, ...globals.node } },
    // `const { type, ...rest } = event`: the named part is left out on purpose.
    rules: { "no-unused-vars": ["error", { ignoreRestSiblings: true }] },
  },
  {
    files: ["**/sw.js"],
    // The gateway writes the shell's list and version into the service worker it serves.
    languageOptions: { sourceType: "script", globals: { ...globals.serviceworker, __SHELL__: "readonly" } },
  },
];
