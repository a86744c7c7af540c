// node's built-in test runner with its junit reporter
// (junit/producers_test.go): top-level tests, which the reporter writes as
// <testcase> directly under <testsuites>, a failure among them, a skip, a
// todo, a describe block with a failure, and one title twice at the top.
const test = require('node:test');
const assert = require('node:assert');

test('frees pages', () => { assert.strictEqual(1 + 1, 2); });
test('charges the ledger', () => { assert.strictEqual(3, 4); });
test('needs a GPU', { skip: 'no GPU here' }, () => {});
test('reclaims on pressure', { todo: true }, () => {});

test.describe('allocator', () => {
  test.it('maps a page', () => {});
  test.it('unmaps twice', () => { throw new Error('double unmap of page 7'); });
});

test('frees pages', () => { assert.ok(false, 'second test of one title'); });
test('answers', () => {});
