// TypeBox building blocks shared by every resource's request schemas.
import { Type, type TSchema } from 'typebox';

/** `T | null` as one JSON Schema type list (clean errors, unlike anyOf). */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** The PATCH envelope: `{"data":{"type":…,"id":…,"attributes":{…}}}` (spec §2.0). */
export const UpdateBody = <A extends TSchema>(type: string, attributes: A) =>
  Type.Object(
    {
      data: Type.Object(
        {
          type: Type.String({ description: `must be "${type}"` }),
          id: Type.String(),
          attributes,
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  );

/** The create envelope: `{"data":{"type":…,"attributes":{…}}}` (spec §2.0). */
export const CreateBody = <A extends TSchema>(type: string, attributes: A) =>
  Type.Object(
    {
      data: Type.Object(
        { type: Type.Literal(type), attributes },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  );

export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 253 }) });
