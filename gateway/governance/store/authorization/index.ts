/**
 * Authorization: roles (authorization_roles), who holds them (role_assignments) and the
 * policies that decide who may issue which command and what needs approval
 * (authorization_policies).
 */
export {
  SYSTEM_ROLES,
  type PrincipalType,
  type RoleAssignmentRecord,
  type RoleRecord,
} from './role.js';
export { ensureSystemRoles } from './ensureSystemRoles.js';
export { insertRole, type NewRole } from './insertRole.js';
export { listRoles } from './listRoles.js';
export { deleteRole, type RoleDeletion } from './deleteRole.js';
export { insertRoleAssignment, type NewRoleAssignment } from './insertRoleAssignment.js';
export { deleteRoleAssignment } from './deleteRoleAssignment.js';
export {
  listPrincipalRoles,
  listRoleAssignments,
  type RoleAssignmentFilter,
} from './listRoleAssignments.js';
export type {
  AuthorizationPolicyFields,
  AuthorizationPolicyRecord,
} from './authorizationPolicy.js';
export { insertAuthorizationPolicy } from './insertAuthorizationPolicy.js';
export { updateAuthorizationPolicy } from './updateAuthorizationPolicy.js';
export { deleteAuthorizationPolicy } from './deleteAuthorizationPolicy.js';
export {
  getAuthorizationPolicy,
  listAuthorizationPolicies,
  type AuthorizationPolicyFilter,
} from './listAuthorizationPolicies.js';
export { listPolicyDevices, type PolicyDevice } from './listPolicyDevices.js';
export { MAX_RULE_POLICIES, readCommandRules, type CommandRules } from './readCommandRules.js';
