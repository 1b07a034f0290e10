/** Multi-party approvals of commands (command_approvals, approval_responses). */
export { requestSubject, type ApprovalRecord, type ApprovalResponseRecord } from './approval.js';
export { insertApproval, type NewApproval } from './insertApproval.js';
export { getApproval } from './getApproval.js';
export { listApprovals, type ApprovalFilter } from './listApprovals.js';
export { insertApprovalResponse, type NewApprovalResponse } from './insertApprovalResponse.js';
export { settleApproval, type ApprovalSettlement } from './settleApproval.js';
export { expireApprovals, type ExpiredApproval } from './expireApprovals.js';
