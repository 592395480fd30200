# seed_redmine.rb: deterministic administration data for the pristine Redmine (run by
# build-redmine.sh with `rails runner`, after db:migrate + redmine:load_default_data).
# Fixed lists + Random.new(20260101): the same rows on every run (timestamps are set to fixed
# values where Redmine shows them). Creates: settings (REST API on, admin password + API key),
# 2 extra trackers, 3 extra roles with workflows, 6 custom fields, 6 groups, 80 users,
# 30 projects (some nested) with members and versions, 300 issues.
R = Random.new(20260101)
ActionMailer::Base.perform_deliveries = false
ActiveJob::Base.queue_adapter = :inline   # no background threads competing for the SQLite lock
ADMIN_API_KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'.freeze
T0 = Time.utc(2025, 6, 2, 9, 0, 0)

def pick(a) = a[R.rand(a.size)]

# --- settings: skip first-login chores, enable REST -------------------------------------------
Setting.rest_api_enabled = '1'
Setting.app_title = 'Proctor Redmine'
Setting.host_name = '127.0.0.1'
Setting.protocol = 'http'
Setting.default_language = 'en'
Setting.login_required = '1'
Setting.text_formatting = 'common_mark'
Setting.mail_from = 'redmine@proctor.example'
Setting.welcome_text = 'Proctor administration sandbox.'

admin = User.find_by_login('admin')
admin.password = admin.password_confirmation = 'proctor-admin'
admin.must_change_passwd = false
admin.mail = 'admin@proctor.example'
admin.firstname, admin.lastname = 'Redmine', 'Admin'
admin.save!
Token.where(user_id: admin.id, action: 'api').delete_all
tok = Token.create!(user: admin, action: 'api')
tok.update_column(:value, ADMIN_API_KEY)

# --- trackers, statuses, roles, workflows --------------------------------------------------------
new_status = IssueStatus.find_by_name('New')
bug = Tracker.find_by_name('Bug')
%w[Task Change\ Request].each_with_index do |name, i|
  t = Tracker.new(name: name, default_status: new_status, position: 4 + i,
                  description: name == 'Task' ? 'Planned work item' : 'Change to a production system')
  t.core_fields = Tracker::CORE_FIELDS
  t.save!
  WorkflowRule.copy(bug, nil, [t], nil)            # same transitions as Bug for every role
end
trackers = Tracker.sorted.to_a

manager = Role.find_by_name('Manager')
developer = Role.find_by_name('Developer')
reporter = Role.find_by_name('Reporter')
extra_roles = {
  'Service Agent' => %i[view_issues add_issues edit_issues add_issue_notes view_private_notes_issues
                        set_notes_private view_time_entries log_time view_wiki_pages view_documents
                        view_files view_news comment_news save_queries],
  'Sales Rep' => %i[view_issues add_issues add_issue_notes view_wiki_pages view_documents view_files
                    view_news view_calendar view_gantt],
  'Auditor' => %i[view_issues view_time_entries view_wiki_pages view_wiki_edits view_documents
                  view_files view_news view_calendar view_gantt view_changesets browse_repository],
}
roles = {}
extra_roles.each_with_index do |(name, perms), i|
  r = Role.new(name: name, position: 6 + i, assignable: name != 'Auditor',
               issues_visibility: name == 'Sales Rep' ? 'own' : 'all')
  r.permissions = perms
  r.save!
  WorkflowRule.copy(nil, developer, nil, [r]) if r.assignable?   # same transitions as Developer
  roles[name] = r
end
roles['Manager'], roles['Developer'], roles['Reporter'] = manager, developer, reporter

# --- custom fields -------------------------------------------------------------------------------
severity = IssueCustomField.create!(name: 'Severity', field_format: 'list',
  possible_values: %w[Low Medium High Critical], default_value: 'Medium', is_for_all: true,
  is_filter: true, tracker_ids: trackers.map(&:id), position: 1)
customer = IssueCustomField.create!(name: 'Customer', field_format: 'string', is_for_all: true,
  is_filter: true, searchable: true, tracker_ids: trackers.map(&:id), position: 2)
IssueCustomField.create!(name: 'Change Window', field_format: 'date', is_for_all: true,
  tracker_ids: [Tracker.find_by_name('Change Request').id], position: 3)
department = UserCustomField.create!(name: 'Department', field_format: 'list',
  possible_values: %w[Engineering Support Sales Finance Operations Management], visible: true,
  editable: true, is_filter: true, position: 1)
cost_center = ProjectCustomField.create!(name: 'Cost Center', field_format: 'string', visible: true,
  is_filter: true, position: 1)
region = ProjectCustomField.create!(name: 'Region', field_format: 'list', visible: true,
  possible_values: %w[EMEA AMER APAC Global], is_filter: true, position: 2)

# --- groups and users ----------------------------------------------------------------------------
group_names = %w[Engineering Support Sales Finance Management Contractors]
groups = group_names.map { |n| Group.create!(lastname: n) }
FIRST = %w[Ada Ben Cleo Dan Eva Finn Gia Hal Ivy Jon Kai Lea Max Nia Oto Pia Quin Rae Sam Tia Uma
           Vic Wes Xia Yan Zed Ari Bea Cal Dee Eli Fay Gus Hana Ian Jade Kurt Lina Milo Nell]
LAST = %w[Abbott Becker Chen Diaz Evans Foster Gupta Hayes Ito Jansen Klein Lopez Meyer Nakamura
          Olsen Park Quist Reyes Schmidt Tran]
users = []
used = {}
while users.size < 80
  f, l = pick(FIRST), pick(LAST)
  login = "#{f}.#{l}".downcase
  next if used[login]
  used[login] = true
  gi = users.size % groups.size
  u = User.new(firstname: f, lastname: l, mail: "#{login}@proctor.example", language: 'en')
  u.login = login
  u.password = u.password_confirmation = 'proctor-user'
  u.admin = (users.size == 4)                       # one extra administrator
  u.status = users.size % 17 == 16 ? User::STATUS_LOCKED : User::STATUS_ACTIVE
  u.custom_field_values = { department.id.to_s => department.possible_values[gi] }
  u.save!
  groups[gi].users << u
  users << u
end

# --- projects ------------------------------------------------------------------------------------
PROJ = ['Website Relaunch', 'Mobile App', 'Customer Portal', 'Data Warehouse', 'ERP Rollout',
        'HR Onboarding', 'Security Hardening', 'Cloud Migration', 'Billing Platform', 'Support Desk',
        'Marketing Campaigns', 'Partner Program', 'Office Move', 'Network Upgrade', 'Analytics',
        'Payments API', 'Search Service', 'Internal Tools', 'QA Automation', 'Documentation',
        'Sales Enablement', 'Field Service', 'Compliance 2026', 'Hardware Refresh', 'Vendor Portal',
        'Identity SSO', 'Logistics Tracker', 'Pricing Engine', 'Customer Success', 'Legacy Decommission']
modules = %w[issue_tracking time_tracking news documents files wiki calendar gantt]
projects = []
PROJ.each_with_index do |name, i|
  ident = name.downcase.gsub(/[^a-z0-9]+/, '-').sub(/-+\z/, '')
  parent = (i >= 24) ? projects[i - 24] : nil         # last 6 are subprojects of the first 6
  p = Project.new(name: name, identifier: ident, is_public: i % 5 != 3,
                  description: "#{name}: internal project #{i + 1} of the Proctor company.")
  p.enabled_module_names = modules
  p.trackers = trackers.select { |t| t.name != 'Change Request' || i.even? }
  p.custom_field_values = { cost_center.id.to_s => format('CC-%04d', 1000 + 37 * i),
                            region.id.to_s => region.possible_values[i % 4] }
  p.status = Project::STATUS_CLOSED if i == 22
  p.save!
  p.set_parent!(parent) if parent
  projects << p
end
projects.each_with_index do |p, i|
  members = users.select(&:active?).sample(R.rand(4..9), random: R)
  members.each_with_index do |u, k|
    role = k.zero? ? roles['Manager'] : pick([roles['Developer'], roles['Developer'], roles['Reporter'],
                                             roles['Service Agent'], roles['Sales Rep']])
    Member.create!(project: p, principal: u, roles: [role])
  end
  g = groups[i % groups.size]
  Member.create!(project: p, principal: g, roles: [pick([roles['Reporter'], roles['Auditor']])])
  2.times do |v|
    Version.create!(project: p, name: "#{p.identifier}-#{v + 1}.0",
                    effective_date: Date.new(2026, 3 * (v + 1), 28),
                    status: v.zero? && i.even? ? 'closed' : 'open')
  end
end

# --- issues --------------------------------------------------------------------------------------
SUBJ = ['Login fails for SSO users', 'Add export to CSV', 'Update privacy policy page',
        'Slow response on dashboard', 'Migrate database to new host', 'Broken link in footer',
        'Rotate TLS certificates', 'Onboard new team member', 'Fix timezone in reports',
        'Add audit log for admin actions', 'Replace legacy cron jobs', 'Translate UI to German',
        'Error 500 when saving profile', 'Design review for checkout', 'Upgrade framework version',
        'Configure backup retention', 'Clean up unused feature flags', 'Add rate limiting to API',
        'Customer cannot reset password', 'Prepare quarterly report']
CUSTOMERS = ['Acme Industries', 'Globex Logistics', 'Initech Systems', 'Umbrella Health',
             'Stark Robotics', 'Wayne Capital', 'Hooli Media', 'Vandelay Foods', '']
statuses = IssueStatus.sorted.to_a
priorities = IssuePriority.active.to_a
open_projects = projects.reject(&:closed?)
issues = []
300.times do |n|
  p = pick(open_projects)
  p.reload
  members = p.members.map(&:principal).select { |x| x.is_a?(User) }
  author = pick(members)
  st = pick(statuses + statuses.first(2) * 2)        # more New/In Progress
  start = Date.new(2025, 6, 2) + R.rand(0..220)
  i = Issue.new(project: p, tracker: pick(p.trackers.to_a), author: author,
                subject: "#{pick(SUBJ)}#{n.odd? ? " (#{p.identifier} ##{100 + n})" : ''}",
                description: "Steps and context for item #{n + 1}.\n\nReported by #{author.name}.",
                priority: pick(priorities), start_date: start,
                due_date: R.rand < 0.7 ? start + R.rand(3..60) : nil,
                estimated_hours: [nil, 1, 2, 4, 8, 16, 24][R.rand(7)],
                done_ratio: st.is_closed? ? 100 : [0, 10, 30, 50, 80][R.rand(5)])
  i.status = st
  assignable = p.assignable_users.to_a
  i.assigned_to = pick(assignable) if st.name != 'New' || R.rand < 0.4
  vs = p.shared_versions.open.to_a
  i.fixed_version = pick(vs) if R.rand < 0.4 && vs.any?
  i.custom_field_values = { severity.id.to_s => pick(severity.possible_values),
                            customer.id.to_s => pick(CUSTOMERS) }
  i.save!
  ts = T0 + n * 3 * 3600
  i.update_columns(created_on: ts, updated_on: ts + 7200, closed_on: st.is_closed? ? ts + 7200 : nil)
  issues << i
end
# a few parent/child relations and related links
issues.each_slice(20) do |sl|
  a = sl[0]
  same = sl[1..].select { |x| x.project_id == a.project_id }
  if same[0] && (!a.status.is_closed? || same[0].status.is_closed?)
    child = Issue.find(same[0].id)                  # fresh: nested-set columns changed
    child.parent_issue_id = a.id
    child.save!
  end
  if same[1]
    IssueRelation.create!(issue_from: Issue.find(a.id), issue_to: Issue.find(same[1].id),
                          relation_type: 'relates')
  end
end
# fixed timestamps for the rest
[User, Project, Member, Version, Group].each { |k| k.update_all(created_on: T0) if k.column_names.include?('created_on') }
User.update_all(updated_on: T0, passwd_changed_on: T0)
Project.update_all(updated_on: T0)
User.where(id: admin.id).update_all(last_login_on: nil)

puts "seeded: #{Project.count} projects, #{User.where(type: 'User').count} users, " \
     "#{Group.givable.count} groups, #{Role.count} roles, #{Tracker.count} trackers, " \
     "#{CustomField.count} custom fields, #{Issue.count} issues"
