/**
 * The shapes `support-agent import` and the console's facts import read, as help text: a module of
 * its own so that `--help` loads no parser.
 */
/** The shapes `import` reads, with an example each (printed by `support-agent import --help`). */
export const IMPORT_FORMATS = `File formats (facts are keyed by the customer's email address; keys must be snake_case):

  CSV, wide: an email column, then one column per fact key; empty cells are skipped.
    email,account_tier,plan
    alice@example.com,premium,annual

  CSV, long: email,key,value and an optional category column.
    email,key,value,category
    alice@example.com,account_tier,premium,account

  JSON (.json): an array of objects, one per customer or per fact, in any of these shapes.
    [{"email": "alice@example.com", "account_tier": "premium", "plan": "annual"}]
    [{"email": "alice@example.com", "key": "account_tier", "value": "premium", "category": "account"}]
    [{"email": "alice@example.com", "facts": {"account_tier": "premium"}}]

Categories: identity, preference, account, situation, sentiment, other (default: from the policy).
The whole file is checked first: one bad row and nothing is imported.`;
