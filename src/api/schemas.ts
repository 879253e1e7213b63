/** Input schemas shared by several routes. */
import Type from 'typebox';

const MAX_INT = 2_147_483_647;

/** The list parameters (docs/api.md#lists); their grammar is checked by domain/list-query.ts. */
export const ListInput = Type.Object({
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT, description: 'Items to skip (default 0)' })),
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INT, description: 'Page size (default 20; 0 = all)' })),
  search: Type.Optional(
    Type.String({ maxLength: 1000, description: 'Case-insensitive match on names; whitespace matches anything' }),
  ),
  sort: Type.Optional(Type.String({ maxLength: 1000, description: 'field_a or field_d, several joined by ":"' })),
  filter: Type.Optional(
    Type.Array(Type.String({ maxLength: 4000 }), { description: 'field_operand[_value] items joined by ";"' }),
  ),
});

export const Text = (description: string, maxLength = 4000) => Type.String({ maxLength, description });

/** Form values arrive as text; JSON clients may send numbers and booleans. */
export const Scalar = (description: string) =>
  Type.Union([Type.String({ maxLength: 4000 }), Type.Number(), Type.Boolean(), Type.Null()], { description });

export const NoInput = Type.Object({});
