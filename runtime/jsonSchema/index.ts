/** The JSON Schema subset of command payload contracts (command_versions): check and validate. */
export {
  JSON_SCHEMA_TYPES,
  type JsonSchema,
  type JsonSchemaIssue,
  type JsonSchemaObject,
  type JsonSchemaType,
} from './subset.js';
export { checkJsonSchema, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES } from './checkJsonSchema.js';
export { jsonEqual, validateJson } from './validateJson.js';
