; Highlights of ZipperGen workflows (.zg), for editors that use tree-sitter
; (Neovim: see docs/editors.md).  No node is captured by two patterns
; (scripts/tree-sitter.sh checks it on every workflow), so highlighters that
; take a node's first pattern (tree-sitter's own) and those that take its
; last (Neovim) show the same; an identifier no pattern names keeps the
; editor's plain colour.

(comment) @comment
(string) @string
(integer) @number
(float) @number.float
[(true) (false)] @boolean
(null) @constant.builtin
(primitive_type) @type.builtin
(type_keyword) @type.builtin
(type_name) @type

[
  "lifeline" "const" "enum" "var" "guard" "workflow" "fragment"
  "store" "cell" "tools" "consistency"
] @keyword

"import" @keyword.import
(lifeline_type) @type.builtin

[
  "llm" "pure" "extern" "effect" "human" "planner"
] @keyword.function

[
  "if" "else" "while"
] @keyword.conditional

"return" @keyword.return

[
  "skip" "parallel" "branch" "coregion" "atomic" "read" "write"
] @keyword

[
  "prev" "since" "once" "historically" "past" "seen"
] @keyword.operator

[
  "->" "==" "!=" "<=" ">=" "&&" "||" "<" ">" "+" "-" "*" "/" "%" "!" "?" "=" "@"
] @operator

["(" ")" "{" "}"] @punctuation.bracket
[";" "," ":" "."] @punctuation.delimiter

; declarations
(lifeline_declaration name: (identifier) @type)
(const_declaration name: (identifier) @constant)
(enum_declaration name: (identifier) @type)
(enum_declaration member: (identifier) @constant)
(var_declaration name: (identifier) @variable)
(guard_declaration name: (identifier) @function.macro)
(action_declaration name: (identifier) @function)
(workflow_declaration name: (identifier) @function)
(fragment_declaration name: (identifier) @function.macro)
(store_declaration name: (identifier) @type)
(cell_declaration name: (identifier) @property)
(tools_declaration tool: (identifier) @function)
(consistency_declaration level: (identifier) @constant)
(atomic_statement store: (identifier) @type)
(cell_read cell: (identifier) @property)
(cell_write cell: (identifier) @property)
(fragment_parameter name: (identifier) @variable.parameter)
(use_statement fragment: (identifier) @function.macro)
(parameter name: (identifier) @variable.parameter)
(input name: (identifier) @variable.parameter)
(property key: (identifier) @property)

; lifelines where statements and formulas name them
(input owner: (identifier) @type)
(message sender: (identifier) @type)
(message receiver: (identifier) @type)
(action_statement lifeline: (identifier) @type)
(local_block lifeline: (identifier) @type)
(skip_statement lifeline: (identifier) @type)
(if_statement owner: (identifier) @type)
(while_statement owner: (identifier) @type)
(return_item lifeline: (identifier) @type)
(at_variable lifeline: (identifier) @type)
(at_formula lifeline: (identifier) @type)
(seen lifeline: (identifier) @type)

(call function: (identifier) @function.call)
