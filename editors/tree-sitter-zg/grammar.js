/**
 * tree-sitter grammar of ZipperGen workflows (.zg), after the compiler's
 * grammar (grammar/parser.y) and the language reference (docs/language.md).
 * Its expressions are written level by level, loosest first, as the
 * compiler's are, so that every program has one tree.
 *
 * Generate the parser with `tree-sitter generate` (tree-sitter-cli, from
 * package.json).  tests/editors/treesitter.mjs checks the grammar on every
 * workflow of the repository and on the corpus (test/corpus) with its own
 * reading of this file, where tree-sitter-cli cannot be installed.
 */

const ident = /[A-Za-z_][A-Za-z0-9_]*/;

function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)));
}

function commaSep(rule) {
  return optional(commaSep1(rule));
}

// a binary level, left-associative: left is this level or the next, right
// the next
function binary(op, left, right) {
  return seq(field('left', left), field('operator', op), field('right', right));
}

module.exports = grammar({
  name: 'zg',

  word: $ => $.identifier,

  extras: $ => [/\s/, $.comment],

  rules: {
    source_file: $ => repeat($._declaration),

    _declaration: $ => choice(
      $.import_declaration,
      $.lifeline_declaration,
      $.const_declaration,
      $.enum_declaration,
      $.var_declaration,
      $.guard_declaration,
      $.action_declaration,
      $.workflow_declaration,
      $.fragment_declaration,
      $.store_declaration,
    ),

    import_declaration: $ => seq('import', field('path', $.string), ';'),

    lifeline_declaration: $ => seq('lifeline', commaSep1(field('name', $.identifier)), ';'),

    const_declaration: $ => seq('const', field('name', $.identifier), '=', field('value', $._expression), ';'),

    enum_declaration: $ => seq(
      'enum', field('name', $.identifier),
      '{', commaSep1(field('member', $.identifier)), optional(','), '}',
    ),

    var_declaration: $ => seq(
      'var', field('name', $.identifier), ':', field('type', $._type),
      optional(seq('=', field('value', $._expression))), ';',
    ),

    guard_declaration: $ => seq('guard', field('name', $.identifier), '=', field('formula', $._expression), ';'),

    action_declaration: $ => choice(
      seq(field('kind', choice('llm', 'human', 'planner')), $._signature, choice(field('body', $.action_body), ';')),
      seq(field('kind', 'pure'), $._signature, '=', field('value', $._expression), ';'),
      seq(field('kind', seq('extern', 'pure')), $._signature, ';'),
      seq(field('kind', 'effect'), $._signature, ';'),
    ),

    _signature: $ => seq(
      field('name', $.identifier),
      field('parameters', $.parameters),
      optional(seq('->', field('results', choice($._type, $.results)))),
    ),

    parameters: $ => seq('(', commaSep($.parameter), ')'),

    parameter: $ => seq(field('name', $.identifier), ':', field('type', $._type)),

    results: $ => seq('(', commaSep1(choice($.parameter, $._type)), ')'),

    action_body: $ => seq('{', repeat($.property), '}'),

    property: $ => seq(
      field('key', $.identifier), '=',
      field('value', choice($._expression, alias(choice('bool', 'int', 'float', 'str', 'json', 'enum'), $.type_keyword))),
      ';',
    ),

    workflow_declaration: $ => seq(
      'workflow', field('name', $.identifier),
      field('inputs', $.inputs),
      optional(seq('->', field('result', choice($._type, $.type_list)))),
      field('body', $.block),
    ),

    inputs: $ => seq('(', commaSep($.input), ')'),

    // fragment f(W: lifeline, x: T, const n: T) { var y: T; statements }
    fragment_declaration: $ => seq(
      'fragment', field('name', $.identifier),
      field('parameters', $.fragment_parameters),
      field('body', $.fragment_body),
    ),

    fragment_parameters: $ => seq('(', commaSep($.fragment_parameter), ')'),

    fragment_parameter: $ => choice(
      seq(field('name', $.identifier), ':', field('type', alias('lifeline', $.lifeline_type))),
      seq(field('name', $.identifier), ':', field('type', $._type)),
      seq('const', field('name', $.identifier), ':', field('type', $._type)),
    ),

    fragment_body: $ => seq(
      '{',
      repeat(alias($.fragment_variable, $.var_declaration)),
      repeat($._statement),
      '}',
    ),

    fragment_variable: $ => seq('var', field('name', $.identifier), ':', field('type', $._type), ';'),

    // store S { cell c: T = e; tools t, u; consistency L2; }
    store_declaration: $ => seq(
      'store', field('name', $.identifier),
      '{', repeat(choice($.cell_declaration, $.tools_declaration, $.consistency_declaration)), '}',
    ),

    cell_declaration: $ => seq(
      'cell', field('name', $.identifier), ':', field('type', $._type),
      optional(seq('=', field('value', $._expression))), ';',
    ),

    tools_declaration: $ => seq('tools', commaSep1(field('tool', $.identifier)), ';'),

    consistency_declaration: $ => seq('consistency', field('level', $.identifier), ';'),

    input: $ => seq(field('name', $.identifier), ':', field('type', $._type), '@', field('owner', $.identifier)),

    type_list: $ => seq('(', commaSep1($._type), ')'),

    _type: $ => choice($.primitive_type, alias($.identifier, $.type_name)),

    primitive_type: _ => choice('bool', 'int', 'float', 'str', 'json'),

    // ---- statements

    block: $ => seq('{', repeat($._statement), '}'),

    _statement: $ => choice(
      $.message,
      $.action_statement,
      $.local_block,
      $.if_statement,
      $.while_statement,
      $.skip_statement,
      $.parallel_statement,
      $.coregion_statement,
      $.return_statement,
      $.use_statement,
      $.atomic_statement,
    ),

    message: $ => seq(
      field('sender', $.identifier), field('values', $.arguments),
      '->',
      field('receiver', $.identifier), field('bindings', $.arguments),
      ';',
    ),

    // f(a, …); a fragment use
    use_statement: $ => seq(field('fragment', $.identifier), field('arguments', $.arguments), ';'),

    action_statement: $ => seq(field('lifeline', $.identifier), ':', $._local, ';'),

    local_block: $ => seq(field('lifeline', $.identifier), '{', repeat(seq($._local, ';')), '}'),

    _local: $ => choice($.assignment, $.call),

    // A: atomic S { x = read c; … write c = e; write tools = (t); }
    // Messages and control statements are parsed there too, as zgc's
    // parser does, so that its checker can say why they are not allowed.
    atomic_statement: $ => seq(
      field('lifeline', $.identifier), ':', 'atomic', field('store', $.identifier),
      '{',
      repeat(choice(
        seq($._local, ';'), $.cell_read, $.cell_write, $.registry_write,
        $.message, $.if_statement, $.while_statement, $.skip_statement, $.parallel_statement,
      )),
      '}',
    ),

    cell_read: $ => seq(field('target', $.identifier), '=', 'read', field('cell', $.identifier), ';'),

    cell_write: $ => seq('write', field('cell', $.identifier), '=', field('value', $._expression), ';'),

    registry_write: $ => seq('write', 'tools', '=', '(', commaSep(field('tool', $.identifier)), ')', ';'),

    assignment: $ => seq(field('targets', choice($.identifier, $.targets)), '=', field('value', $._expression)),

    targets: $ => seq('(', commaSep1($.identifier), ')'),

    if_statement: $ => seq(
      'if', field('condition', $._expression), '@', field('owner', $.identifier),
      field('then', $.block),
      optional(seq('else', field('else', choice($.block, $.if_statement)))),
    ),

    while_statement: $ => seq(
      'while', field('condition', $._expression), '@', field('owner', $.identifier),
      field('body', $.block),
      optional(seq('else', field('else', $.block))),
    ),

    skip_statement: $ => seq('skip', field('lifeline', $.identifier), ';'),

    parallel_statement: $ => seq('parallel', '{', repeat($.branch), '}'),

    branch: $ => seq('branch', $.block),

    coregion_statement: $ => seq('coregion', $.block),

    return_statement: $ => seq('return', choice($.return_item, seq('(', commaSep1($.return_item), ')')), ';'),

    return_item: $ => seq(field('value', $.identifier), '@', field('lifeline', $.identifier)),

    // ---- expressions and CPL formulas, loosest first:
    //   ?:   ||   &&   since   prev/once/historically/past   == !=
    //   < <= > >=   + -   * / %   ! -   primary

    _expression: $ => choice($.conditional_expression, $._or),

    // c ? a : b, where c is tighter than ?: and b may be another ?:
    conditional_expression: $ => seq(
      field('condition', $._or), '?', field('consequence', $._expression), ':', field('alternative', $._expression),
    ),

    _or: $ => choice(alias($.or_expression, $.binary_expression), $._and),
    or_expression: $ => binary('||', choice(alias($.or_expression, $.binary_expression), $._and), $._and),

    _and: $ => choice(alias($.and_expression, $.binary_expression), $._since),
    and_expression: $ => binary('&&', choice(alias($.and_expression, $.binary_expression), $._since), $._since),

    _since: $ => choice($.since_expression, $._temporal),
    since_expression: $ => seq(field('left', choice($.since_expression, $._temporal)), 'since', field('right', $._temporal)),

    _temporal: $ => choice($.temporal_expression, $._equality),
    temporal_expression: $ => seq(field('operator', choice('prev', 'once', 'historically', 'past')), field('operand', $._temporal)),

    _equality: $ => choice(alias($.equality_expression, $.binary_expression), $._relation),
    equality_expression: $ => binary(choice('==', '!='), choice(alias($.equality_expression, $.binary_expression), $._relation), $._relation),

    _relation: $ => choice(alias($.relation_expression, $.binary_expression), $._sum),
    relation_expression: $ => binary(choice('<', '<=', '>', '>='), choice(alias($.relation_expression, $.binary_expression), $._sum), $._sum),

    _sum: $ => choice(alias($.sum_expression, $.binary_expression), $._product),
    sum_expression: $ => binary(choice('+', '-'), choice(alias($.sum_expression, $.binary_expression), $._product), $._product),

    _product: $ => choice(alias($.product_expression, $.binary_expression), $._unary),
    product_expression: $ => binary(choice('*', '/', '%'), choice(alias($.product_expression, $.binary_expression), $._unary), $._unary),

    _unary: $ => choice($.unary_expression, $._primary),
    unary_expression: $ => seq(field('operator', choice('!', '-')), field('operand', $._unary)),

    _primary: $ => choice(
      $.integer,
      $.float,
      $.string,
      $.true,
      $.false,
      $.null,
      $.identifier,
      $.call,
      $.at_variable,
      $.at_formula,
      $.seen,
      $.parenthesized_expression,
      $.tuple,
    ),

    call: $ => seq(
      field('function', choice($.identifier, alias(choice('int', 'float', 'str'), $.identifier))),
      field('arguments', $.arguments),
    ),

    arguments: $ => seq('(', commaSep($._expression), ')'),

    at_variable: $ => seq('@', field('lifeline', $.identifier), '.', field('variable', $.identifier)),

    at_formula: $ => seq('@', field('lifeline', $.identifier), '(', field('formula', $._expression), ')'),

    seen: $ => seq('seen', field('lifeline', $.identifier)),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    tuple: $ => seq('(', $._expression, ',', commaSep1($._expression), ')'),

    // ---- tokens

    identifier: _ => ident,

    integer: _ => /[0-9]+/,

    float: _ => /[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+/,

    string: _ => choice(
      token(seq('"""', /([^"]|"[^"]|""[^"])*/, '"""')),
      token(seq('"', /([^"\\\n]|\\[^\n])*/, '"')),
    ),

    true: _ => 'true',
    false: _ => 'false',
    null: _ => 'null',

    comment: _ => token(choice(
      seq('//', /[^\n]*/),
      seq('/*', /[^*]*\*+([^/*][^*]*\*+)*/, '/'),
    )),
  },
});
