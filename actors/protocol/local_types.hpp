// Value types that travel only between actors of one process (never serialized): whitelisted for
// CAF messages. Anything that may cross processes is Cap'n Proto bytes instead.
#pragma once

#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>

#include "messages/model/apply_outcome.hpp"
#include "messages/model/batch_job.hpp"
#include "messages/model/flow_documents.hpp"
#include "messages/model/gang_request.hpp"
#include "messages/model/job_flow.hpp"
#include "messages/model/job_spec.hpp"
#include "messages/model/job_status.hpp"
#include "messages/model/job_template.hpp"
#include "messages/model/node_info.hpp"
#include "messages/model/priority_class.hpp"
#include "messages/model/queue.hpp"
#include "messages/model/resources.hpp"

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::GangRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caldera::Binding>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caldera::NodeInfo>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::ResourceList)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::JobStatus)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::JobFlow)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::JobSpec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::FlowDocuments)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caldera::JobTemplate>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caldera::JobFlow>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::PodGroupInfo)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caldera::Queue>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caldera::PriorityClass>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<caldera::QueueStatus>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::QueueSpec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::PriorityClass)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::ApplyOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::BatchJobSpec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::JobFlowSpec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::ParsedDocuments)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(caldera::AdmissionContext)
